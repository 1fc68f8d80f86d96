import torch
import torch.nn as nn

K = 3
torch.manual_seed(0)
cell, head = nn.LSTMCell(2, 6), nn.Linear(6, 1)
optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.05)
xs, ys = torch.randn(12, 4, 2), torch.randn(12, 4, 1)
h, c = torch.zeros(4, 6), torch.zeros(4, 6)
loss = 0
for t in range(12):
    h, c = cell(xs[t], (h, c))
    loss = loss + (head(h) - ys[t]).pow(2).mean()
    if (t + 1) % K == 0:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        h, c = h.detach(), c.detach()
        loss = 0
