import torch
import torch.nn as nn


def f(t):
    g(t)
    t.add_(1.0)
    return t


def g(t):
    f(t)
    return t


class P(nn.Module):
    def forward(self, x):
        return f(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        out = torch.sigmoid(self.fc(x))
        g(out)
        return out * 2
