import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--bptt", type=int, default=5)
args = parser.parse_args()

torch.manual_seed(0)
rnn = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
stream = torch.randn(20, 2, 4)
hidden = torch.zeros(2, 8)
for epoch in range(2):
    loss = 0
    for i, x in enumerate(stream):
        if i % args.bptt == 0:  # a window starts: cut the history
            hidden = hidden.detach()
        hidden = rnn(x, hidden)
        loss = loss + head(hidden).pow(2).mean()
        if i % args.bptt == args.bptt - 1:  # the window ends: learn from it
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss = 0
