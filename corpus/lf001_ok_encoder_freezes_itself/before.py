import torch
import torch.nn as nn


class FrozenEncoder(nn.Module):
    """A pretrained recurrent encoder used as a fixed feature extractor."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(4, 8)
        self.requires_grad_(False)

    def forward(self, x, state):
        return self.lstm(x, state)


torch.manual_seed(0)
encoder, head = FrozenEncoder(), nn.Linear(8, 2)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
state = (torch.zeros(1, 3, 8), torch.zeros(1, 3, 8))
for step in range(4):
    feats, state = encoder(torch.randn(5, 3, 4), state)
    loss = head(feats).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
