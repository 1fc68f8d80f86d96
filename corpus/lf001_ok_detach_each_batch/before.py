import torch
import torch.nn as nn

torch.manual_seed(0)
gru, out = nn.GRU(4, 8), nn.Linear(8, 4)
optimizer = torch.optim.Adam([*gru.parameters(), *out.parameters()], lr=1e-3)
series = torch.randn(41, 2, 4)
h = torch.zeros(1, 2, 8)
for epoch in range(2):
    for t in range(0, 40, 8):
        y, h = gru(series[t : t + 8], h)
        h = h.detach()
        loss = (out(y) - series[t + 1 : t + 9]).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
