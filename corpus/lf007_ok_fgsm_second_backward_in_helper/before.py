import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(5)]
eps = 0.1


def backprop(loss):
    loss.backward()


for step, (x, y) in enumerate(data):
    x = x.clone().requires_grad_(True)
    loss_clean = F.cross_entropy(model(x), y)
    loss_clean.backward()
    x_adv = (x + eps * x.grad.sign()).detach()
    optimizer.zero_grad()
    loss_adv = F.cross_entropy(model(x_adv), y)
    backprop(loss_adv)
    optimizer.step()
    print(step, round(loss_adv.item(), 4))
