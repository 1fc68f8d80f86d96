import torch
import torch.nn as nn

if True:
    def bump(t):
        t.add_(1.0)
        return t


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        out = torch.sigmoid(self.fc(x))
        bump(out)
        return out * 2
