import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
accumulation_steps = 4
optimizer.zero_grad()
for i in range(8):
    x, y = torch.randn(4, 6), torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(model(x), y) / accumulation_steps
    loss.backward()
    if (i + 1) % accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
