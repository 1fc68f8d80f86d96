import torch
import torch.nn as nn

torch.manual_seed(0)
model_a = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
model_b = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt_a = torch.optim.SGD(model_a.parameters(), lr=0.1)
opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss_a = (model_a(x) - y).pow(2).mean()
    loss_b = (model_b(x) - y).abs().mean()
    opt_a.zero_grad()
    loss_a.backward()
    opt_a.step()
    opt_b.zero_grad()
    loss_b.backward()
    opt_b.step()
