import torch
import torch.nn as nn

torch.manual_seed(0)
cell, readout = nn.GRUCell(3, 8), nn.Linear(8, 1)
optimizer = torch.optim.SGD([*cell.parameters(), *readout.parameters()], lr=0.1)
for batch in range(3):
    sequence, target = torch.randn(6, 4, 3), torch.randn(4, 1)
    h = torch.zeros(4, 8)
    for x_t in sequence:
        h = cell(x_t, h)
    loss = (readout(h) - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
