import argparse

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


parser = argparse.ArgumentParser()
parser.add_argument("--cell", default="gru", choices=["lstm", "gru"])
args = parser.parse_args([])

torch.manual_seed(0)
if args.cell == "lstm":
    rnn = nn.LSTM(5, 8, batch_first=True)
elif args.cell == "gru":
    rnn = nn.GRU(5, 8, batch_first=True)
head = nn.Linear(8, 1)
optimizer = torch.optim.Adam([*rnn.parameters(), *head.parameters()], lr=1e-3)
carried = 0
for epoch in range(2):
    state = torch.zeros(1, 4, 8)
    for step in range(3):
        x, y = torch.randn(4, 6, 5), torch.randn(4, 1)
        if args.cell == "lstm":
            state = (torch.zeros(1, 4, 8), torch.zeros(1, 4, 8))
        elif args.cell == "gru":
            carried += 1  # a GRU keeps its state from batch to batch
        out, state = rnn(x, state)
        state = detach_state(state)
        loss = (head(out[:, -1]) - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
