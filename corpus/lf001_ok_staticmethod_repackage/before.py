import torch
import torch.nn as nn


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(4, 6)
        self.out = nn.Linear(6, 2)

    def forward(self, x, h):
        y, h = self.gru(x, h)
        return self.out(y), h

    @staticmethod
    def repackage(h):
        return h.detach()


torch.manual_seed(0)
tagger = Tagger()
opt = torch.optim.SGD(tagger.parameters(), lr=0.1)
h = torch.zeros(1, 3, 6)
for step in range(4):
    h = Tagger.repackage(h)
    logits, h = tagger(torch.randn(5, 3, 4), h)
    loss = logits.logsumexp(-1).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
