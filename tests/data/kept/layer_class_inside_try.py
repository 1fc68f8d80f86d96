import torch
import torch.nn as nn

try:
    class Bump(nn.Module):
        def forward(self, t):
            t.add_(1.0)
            return t
except ImportError:
    pass


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bump = Bump()

    def forward(self, x):
        out = torch.sigmoid(self.fc(x))
        self.bump(out)
        return out * 2
