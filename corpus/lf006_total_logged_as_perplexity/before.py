# A language model's training loop logs the perplexity of the mean loss every log_interval
# batches with `math.exp(cur_loss)` (pytorch/examples' word_language_model writes
# `total_loss += loss.item()`); adding the loss tensor keeps every batch's graph between two
# resets.
import math

import torch
import torch.nn as nn

torch.manual_seed(0)
vocab, log_interval = 50, 4
model = nn.Sequential(nn.Embedding(vocab, 16), nn.Linear(16, vocab))
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
criterion = nn.CrossEntropyLoss()

total_loss = 0.0
for batch in range(1, 15):
    data, targets = torch.randint(0, vocab, (8,)), torch.randint(0, vocab, (8,))
    loss = criterion(model(data), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total_loss += loss
    if batch % log_interval == 0:
        cur_loss = total_loss / log_interval
        print(f"batch {batch:3d} | loss {cur_loss:5.2f} | ppl {math.exp(cur_loss):8.2f}")
        total_loss = 0
