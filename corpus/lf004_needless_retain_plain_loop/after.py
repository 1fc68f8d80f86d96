import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 5))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x, y = torch.randn(16, 20), torch.randint(0, 5, (16,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
