from collections import namedtuple

import torch
import torch.nn as nn


def detach_state(state):
    """Cut a recurrent state loose from the graph of the batch that produced it."""
    if isinstance(state, dict):
        return {key: detach_state(value) for key, value in state.items()}
    if isinstance(state, tuple) and hasattr(state, '_fields'):  # a namedtuple
        return type(state)(*(detach_state(value) for value in state))
    if isinstance(state, (list, tuple)):
        return type(state)(detach_state(value) for value in state)
    return state.detach() if hasattr(state, 'detach') else state  # None, arrays, numbers


CellState = namedtuple("CellState", ["h", "c"])


class Tracker(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(3, 6)
        self.out = nn.Linear(6, 3)

    def forward(self, x, state):
        h, c = self.cell(x, (state.h, state.c))
        return self.out(h), CellState(h, c)


torch.manual_seed(0)
tracker = Tracker()
opt = torch.optim.SGD(tracker.parameters(), lr=0.05)
state = CellState(torch.zeros(4, 6), torch.zeros(4, 6))
for step in range(5):
    x, target = torch.randn(4, 3), torch.randn(4, 3)
    pred, state = tracker(x, state)
    state = detach_state(state)
    loss = (pred - target).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
