import torch
import torch.nn as nn


class Base(nn.Module):
    def bump(self, t):
        return self.act(t)


class Plain(Base):
    def __init__(self):
        super().__init__()
        self.act = nn.ReLU()

    def forward(self, x):
        return self.bump(x)


class Net(Base):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        out = torch.sigmoid(self.fc(x))
        self.bump(out)
        return out * 2
