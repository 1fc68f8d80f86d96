# A recurrent state kept in a list that a helper fills (`fill(states, h)` stores the new state
# into the caller's list): the next step reads it undetached and its backward goes through
# the previous step's freed graph.
import torch
import torch.nn as nn


def fill(states, state):
    states[0] = state


torch.manual_seed(0)
rnn = nn.GRUCell(4, 8)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.1)
states = [torch.zeros(1, 8)]
for step in range(3):
    h = rnn(torch.randn(1, 4), states[0])
    fill(states, h)
    states = [s.detach() for s in states]
    loss = h.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
