import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def reset_grad():
    optimizer.zero_grad(set_to_none=True)


for step in range(4):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    reset_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    optimizer.step()
