import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(5)]
eps = 0.1
rho = 0.05
for i, (x, y) in enumerate(data):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    with torch.no_grad():
        norm = torch.norm(torch.stack([p.grad.norm() for p in model.parameters()]))
        eps_w = [rho * p.grad / (norm + 1e-12) for p in model.parameters()]
        for p, e in zip(model.parameters(), eps_w):
            p.add_(e)
    optimizer.zero_grad()
    torch.autograd.backward(F.cross_entropy(model(x), y))
    with torch.no_grad():
        for p, e in zip(model.parameters(), eps_w):
            p.sub_(e)
    optimizer.step()
    print(i, round(loss.item(), 4))
