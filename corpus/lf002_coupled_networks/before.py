import torch
import torch.nn as nn

torch.manual_seed(0)
net_a = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 5))
net_b = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 5))
opt_a = torch.optim.RMSprop(net_a.parameters(), lr=1e-3)
opt_b = torch.optim.RMSprop(net_b.parameters(), lr=1e-3)

for step in range(3):
    x = torch.randn(8, 5)
    a_out = net_a(x)
    b_out = net_b(a_out)
    loss_a = (a_out - x).pow(2).mean() + 0.1 * b_out.pow(2).mean()
    loss_b = (b_out - x).pow(2).mean()
    opt_a.zero_grad()
    loss_a.backward(retain_graph=True)
    opt_a.step()
    opt_b.zero_grad()
    loss_b.backward()
    opt_b.step()
