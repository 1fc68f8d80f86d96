import torch
import torch.nn as nn


def setup():
    import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        out = torch.sigmoid(self.fc(x))
        F.relu(out, inplace=True)
        return out * 2
