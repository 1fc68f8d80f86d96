import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    optimizer.zero_grad()
    total = 0.0
    for micro in range(4):
        x, y = torch.randn(2, 10), torch.randint(0, 2, (2,))
        total = total + nn.functional.cross_entropy(model(x), y) / 4
    total.backward()
    optimizer.step()
