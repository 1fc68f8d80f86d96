import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.LSTMCell(3, 6)
head = nn.Linear(6, 1)
optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)
h, c = torch.zeros(4, 6), torch.zeros(4, 6)
for batch in range(5):
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    h, c = cell(x, (h, c))
    loss = (head(h) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    h.detach_()
    c = c.data
