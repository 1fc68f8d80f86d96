import torch
from torch import nn


class Accelerator:
    """A stand-in with Accelerate's call shape: backward(loss, **kwargs)."""

    def prepare(self, *objects):
        return objects

    def backward(self, loss, **kwargs):
        loss.backward(**kwargs)


torch.manual_seed(0)
accelerator = Accelerator()
lstm = nn.LSTM(2, 5)
head = nn.Linear(5, 2)
optimizer = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-2)
state = (torch.zeros(1, 3, 5), torch.zeros(1, 3, 5))
for step in range(4):
    tokens = torch.randn(6, 3, 2)
    seq, state = lstm(tokens, state)
    loss = head(seq).pow(2).mean()
    optimizer.zero_grad()
    accelerator.backward(loss)
    optimizer.step()
