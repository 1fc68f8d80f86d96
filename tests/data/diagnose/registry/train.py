import torch
import torch.nn as nn


class Memory:
    """State kept under names chosen at run time (a registry)."""


torch.manual_seed(0)
rnn = nn.GRU(4, 8)
head = nn.Linear(8, 2)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
memory = Memory()
slot = "h"
for step in range(4):
    x, y = torch.randn(5, 3, 4), torch.randint(0, 2, (3,))
    state = getattr(memory, slot, None)
    out, state = rnn(x, state)
    setattr(memory, slot, state)
    loss = nn.functional.cross_entropy(head(out[-1]), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
