# A model object whose `forward` keeps an auxiliary output only under a setting, and whose
# `backward_G` adds that output's loss under the same setting (DRIT's `if not self.no_ms:`);
# the training loop calls the object's `update`, which runs both. The setting never changes,
# so `self.aux_out` is read only in an iteration that computed it.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, use_aux):
        super().__init__()
        self.use_aux = use_aux
        self.enc = nn.Linear(4, 8)
        self.aux = nn.Linear(8, 1)
        self.head = nn.Linear(8, 1)
        self.optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)

    def forward(self, x):
        self.feature = torch.tanh(self.enc(x))
        if self.use_aux:
            self.aux_out = self.aux(self.feature)
        return self.head(self.feature)

    def backward_G(self, out, y):
        loss = (out - y).pow(2).mean()
        if self.use_aux:
            loss = loss + self.aux_out.pow(2).mean()
        loss.backward()

    def update(self, x, y):
        self.optimizer.zero_grad()
        out = self.forward(x)
        self.backward_G(out, y)
        self.optimizer.step()


def train(use_aux):
    torch.manual_seed(0)
    model = Model(use_aux)
    for _ in range(4):
        model.update(torch.randn(2, 4), torch.randn(2, 1))


if __name__ == "__main__":
    train(use_aux=False)
    train(use_aux=True)
