# Sentence classification with an LSTM over shuffled mini-batches of independent sentences.
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
sentences = torch.randn(64, 12, 8)  # 64 sentences, 12 tokens, 8 features
labels = torch.randint(0, 3, (64,))
loader = DataLoader(TensorDataset(sentences, labels), batch_size=16, shuffle=True)

lstm = nn.LSTM(8, 32, batch_first=True)
head = nn.Linear(32, 3)
optimizer = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-3)
criterion = nn.CrossEntropyLoss()

state = (torch.zeros(1, 16, 32), torch.zeros(1, 16, 32))
for epoch in range(2):
    for x, y in loader:
        out, state = lstm(x, state)
        loss = criterion(head(out[:, -1]), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
