import operator

import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(3, 4)
head = nn.Linear(4, 1)
optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)
cut = operator.methodcaller("clone")  # the state keeps its graph
hidden = torch.zeros(2, 4)
for step in range(6):
    hidden = cell(torch.randn(2, 3), hidden)
    loss = head(hidden).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    hidden = cut(hidden)
