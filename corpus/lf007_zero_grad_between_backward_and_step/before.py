import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(4):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.zero_grad()
    optimizer.step()
