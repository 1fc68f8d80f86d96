import torch
import torch.nn as nn

torch.manual_seed(0)
lstm, proj = nn.LSTM(3, 7), nn.Linear(7, 3)
opt = torch.optim.Adam([*lstm.parameters(), *proj.parameters()], lr=1e-3)
state = (torch.zeros(1, 4, 7), torch.zeros(1, 4, 7))
for step in range(5):
    x = torch.randn(6, 4, 3)
    state = tuple(map(torch.Tensor.detach, state))
    out, state = lstm(x, state)
    loss = proj(out).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    state = tuple(map(lambda s: s.detach(), state))
