import torch
import torch.nn as nn


def train(recurrent):
    torch.manual_seed(0)
    cell = nn.GRUCell(4, 4)
    optimizer = torch.optim.SGD(cell.parameters(), lr=0.1)
    frames = torch.randn(6, 2, 4)
    if recurrent:
        h = torch.zeros(2, 4)
    for t in range(5):
        if recurrent:
            h = cell(frames[t], h)
            out = h
        else:
            out = cell(frames[t])
        loss = (out - frames[t + 1]).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


train(False)
train(True)
