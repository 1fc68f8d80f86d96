import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(5)]
for i, (x, y) in enumerate(data):
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    torch.autograd.backward(loss)
    optimizer.step()
    print(i, round(loss.item(), 4))
