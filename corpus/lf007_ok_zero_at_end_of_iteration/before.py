import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
optimizer.zero_grad()
for step in range(4):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
    optimizer.zero_grad()
