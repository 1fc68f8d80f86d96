# Multi-head regression: the network returns one output per head from a shared trunk, and the
# loop backpropagates each head's loss as it walks the call's result; the first backward
# frees the trunk's graph that the second head's loss still goes through.
import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.heads = nn.ModuleList([nn.Linear(8, 1), nn.Linear(8, 1)])

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return [head(h) for head in self.heads]


torch.manual_seed(0)
net = TwoHeads()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    optimizer.zero_grad()
    for k, out in enumerate(net(x)):
        loss = (out - y).pow(2).mean()
        loss.backward(retain_graph=True)
    optimizer.step()
