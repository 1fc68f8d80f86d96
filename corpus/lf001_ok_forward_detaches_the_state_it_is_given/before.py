# A recurrent cell whose forward cuts the state it is given (`h = h.detach()`) and returns
# the new state as one tensor: the loop carries `h` from batch to batch, and each backward
# goes through that batch's step only.
import torch
import torch.nn as nn


class TruncatedCell(nn.Module):
    def __init__(self, n_in, n_hidden):
        super().__init__()
        self.cell = nn.GRUCell(n_in, n_hidden)

    def forward(self, x, h):
        h = h.detach()  # truncated backpropagation: one step at a time
        return self.cell(x, h)


torch.manual_seed(0)
cell = TruncatedCell(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
h = torch.zeros(2, 8)
for step in range(5):
    x, y = torch.randn(2, 4), torch.randn(2, 1)
    h = cell(x, h)
    loss = (head(h) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
