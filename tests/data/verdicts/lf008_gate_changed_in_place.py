import torch
import torch.nn as nn

torch.manual_seed(0)
gate, layer = nn.Linear(4, 4), nn.Linear(4, 4)
optimizer = torch.optim.SGD(list(gate.parameters()) + list(layer.parameters()), lr=0.1)
LEARN_GATE = True
for _ in range(3):
    x = torch.randn(8, 4)
    g = gate(x) if LEARN_GATE else x
    out = torch.sigmoid(g)
    out += layer(x)
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
