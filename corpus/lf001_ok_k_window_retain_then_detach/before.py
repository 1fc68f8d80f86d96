import torch
import torch.nn as nn

torch.manual_seed(0)
gru, head = nn.GRU(4, 8), nn.Linear(8, 4)
opt = torch.optim.Adam([*gru.parameters(), *head.parameters()], lr=1e-3)
K = 3
h = torch.zeros(1, 2, 8)
stream = torch.randn(91, 2, 4)
opt.zero_grad()
for i, t in enumerate(range(0, 90, 10)):
    out, h = gru(stream[t : t + 10], h)
    loss = nn.functional.mse_loss(head(out), stream[t + 1 : t + 11]) / K
    loss.backward(retain_graph=True)
    if (i + 1) % K == 0:
        opt.step()
        opt.zero_grad()
        h = h.detach()
