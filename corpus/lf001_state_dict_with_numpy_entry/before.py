import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(4, 4)
optimizer = torch.optim.SGD(cell.parameters(), lr=0.1)
frames = torch.randn(6, 2, 4)
state = {"h": torch.zeros(2, 4), "trace": np.zeros(3)}
for t in range(5):
    h = cell(frames[t], state["h"])
    loss = (h - frames[t + 1]).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    state = {"h": h, "trace": state["trace"] + 1}
