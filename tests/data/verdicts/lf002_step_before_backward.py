import torch
import torch.nn as nn

torch.manual_seed(0)
model_b = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 4))
model_a = nn.Linear(4, 1)
opt_b = torch.optim.SGD(model_b.parameters(), lr=0.1)
opt_a = torch.optim.SGD(model_a.parameters(), lr=0.1)
for _ in range(3):
    x = torch.randn(8, 4)
    out_b = model_b(x)
    loss_b = out_b.pow(2).mean()
    loss_a = model_a(out_b).mean()
    opt_b.zero_grad()
    loss_b.backward(retain_graph=True)
    opt_b.step()
    opt_a.zero_grad()
    loss_a.backward()
    opt_a.step()
