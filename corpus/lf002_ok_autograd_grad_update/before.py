import torch
import torch.nn as nn
from torch.func import functional_call

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
meta_opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for task in range(3):
    x_s, y_s, x_q, y_q = torch.randn(5, 3), torch.randn(5, 1), torch.randn(5, 3), torch.randn(5, 1)
    params = dict(net.named_parameters())
    support_loss = (functional_call(net, params, (x_s,)) - y_s).pow(2).mean()
    grads = torch.autograd.grad(support_loss, list(params.values()), create_graph=False)
    fast = {name: p - 0.1 * g for (name, p), g in zip(params.items(), grads)}
    query_loss = (functional_call(net, fast, (x_q,)) - y_q).pow(2).mean()
    meta_opt.zero_grad()
    query_loss.backward()
    meta_opt.step()
