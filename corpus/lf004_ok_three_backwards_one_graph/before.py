import torch
import torch.nn as nn

torch.manual_seed(0)
body = nn.Linear(5, 4)
out_layer = nn.Linear(4, 2)
optimizer = torch.optim.Adam([*body.parameters(), *out_layer.parameters()], lr=1e-3)
for step in range(3):
    y = out_layer(body(torch.randn(7, 5)))
    smooth = y.pow(2).mean()
    l1 = y.abs().mean()
    total = 0.1 * y.sum() + l1
    optimizer.zero_grad()
    smooth.backward(retain_graph=True)
    total.backward(retain_graph=True)
    l1.backward()
    optimizer.step()
