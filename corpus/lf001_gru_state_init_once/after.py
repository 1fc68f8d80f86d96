import torch
import torch.nn as nn

torch.manual_seed(0)
series = torch.randn(60, 2, 4)
gru = nn.GRU(4, 10)
readout = nn.Linear(10, 4)
params = list(gru.parameters()) + list(readout.parameters())
opt = torch.optim.SGD(params, lr=0.05)

h = torch.zeros(1, 2, 10)
for epoch in range(2):
    for start in range(0, 50, 10):
        chunk = series[start : start + 10]
        nxt = series[start + 1 : start + 11]
        out, h = gru(chunk, h)
        h = h.detach()
        loss = ((readout(out) - nxt) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
