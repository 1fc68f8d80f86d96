import numpy as np
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


torch.manual_seed(0)
cell = nn.GRUCell(4, 4)
optimizer = torch.optim.SGD(cell.parameters(), lr=0.1)
frames = torch.randn(6, 2, 4)
state = {"h": torch.zeros(2, 4), "trace": np.zeros(3)}
for t in range(5):
    state = detach_state(state)
    h = cell(frames[t], state["h"])
    loss = (h - frames[t + 1]).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    state = {"h": h, "trace": state["trace"] + 1}
