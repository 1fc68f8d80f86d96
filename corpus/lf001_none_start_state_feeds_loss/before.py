import torch
import torch.nn as nn

torch.manual_seed(0)
gru = nn.GRU(4, 6)
optimizer = torch.optim.SGD(gru.parameters(), lr=0.05)
h = None
for i in range(4):
    x, y = torch.randn(5, 2, 4), torch.randn(5, 2, 6)
    out, h = gru(x, h)
    loss = (out - y).pow(2).mean() + 1e-3 * h.pow(2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
