import torch
import torch.nn as nn

from helpers import keep

torch.manual_seed(0)
lstm = nn.LSTM(3, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=0.1)
hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
for batch in range(4):
    out, hidden = lstm(torch.randn(5, 2, 3), hidden)
    loss = head(out).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    hidden = keep(hidden)
