import torch
from torch import nn

torch.manual_seed(0)
net_a, net_b = nn.Linear(4, 2), nn.Linear(4, 2)
opt_a = torch.optim.SGD(net_a.parameters(), lr=0.1)
opt_b = torch.optim.SGD(net_b.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(5, 4)
    outs = {"a": net_a(x), "b": net_b(x)}
    opt_a.zero_grad()
    outs["a"].pow(2).mean().backward()
    opt_a.step()
    opt_b.zero_grad()
    outs["b"].pow(2).mean().backward()
    opt_b.step()
