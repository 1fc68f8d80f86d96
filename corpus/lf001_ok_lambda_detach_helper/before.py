import torch
import torch.nn as nn

detach_all = lambda states: [s.detach() for s in states]

torch.manual_seed(0)
cells = nn.ModuleList([nn.GRUCell(3, 5), nn.GRUCell(5, 5)])
head = nn.Linear(5, 3)
opt = torch.optim.Adam([*cells.parameters(), *head.parameters()], lr=1e-3)
states = [torch.zeros(2, 5), torch.zeros(2, 5)]
for step in range(5):
    states = detach_all(states)
    x = torch.randn(2, 3)
    new = []
    for cell, h in zip(cells, states):
        x = cell(x, h)
        new.append(x)
    states = new
    loss = head(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
