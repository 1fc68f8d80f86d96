import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.GRU(3, 6, batch_first=True)
classifier = nn.Linear(6, 2)
optimizer = torch.optim.SGD([*encoder.parameters(), *classifier.parameters()], lr=0.1)
stream = torch.randn(2, 40, 3)
labels = torch.randint(0, 2, (2,))

position, memory = 0, torch.zeros(1, 2, 6)
while position < 30:
    chunk = stream[:, position : position + 10]
    outputs, memory = encoder(chunk, memory)
    memory = memory.detach()
    logits = classifier(outputs[:, -1])
    loss = nn.functional.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    position += 10
