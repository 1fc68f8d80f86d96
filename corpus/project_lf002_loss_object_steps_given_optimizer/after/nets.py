import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self, dim=12, code=3):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, 24), nn.ReLU(), nn.Linear(24, code))
        self.dec = nn.Sequential(nn.Linear(code, 24), nn.ReLU(), nn.Linear(24, dim))

    def forward(self, x):
        code = self.enc(x)
        return self.dec(code), code


class CodeCritic(nn.Module):
    def __init__(self, code=3):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(code, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, code):
        return self.net(code)
