import torch
import torch.nn as nn

K = 4
torch.manual_seed(0)
cells = nn.ModuleList([nn.LSTMCell(4, 8), nn.LSTMCell(8, 8)])
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD(list(cells.parameters()) + list(head.parameters()), lr=0.1)
xs, ys = torch.randn(12, 3, 4), torch.randn(12, 3, 1)

states = [(torch.zeros(3, 8), torch.zeros(3, 8)) for _ in cells]
loss = 0
for t in range(12):
    inp = xs[t]
    new_states = []
    for layer, cell in enumerate(cells):
        h, c = cell(inp, states[layer])
        new_states.append((h, c))
        inp = h
    states = new_states
    loss = loss + (head(inp) - ys[t]).pow(2).mean()
    if (t + 1) % K == 0:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        loss = 0
