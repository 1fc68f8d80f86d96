import torch
import torch.nn as nn

torch.manual_seed(0)
lstm, proj = nn.LSTM(5, 9), nn.Linear(9, 5)
opt = torch.optim.SGD([*lstm.parameters(), *proj.parameters()], lr=0.05)
hidden = (torch.zeros(1, 2, 9), torch.zeros(1, 2, 9))
series = torch.randn(81, 2, 5)
for t in range(0, 80, 8):
    out, hidden = lstm(series[t : t + 8], hidden)
    loss = nn.functional.mse_loss(proj(out), series[t + 1 : t + 9])
    opt.zero_grad()
    loss.backward()
    opt.step()
    for state in hidden:
        state.detach_()
