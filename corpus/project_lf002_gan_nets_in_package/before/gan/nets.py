from torch import nn


class Generator(nn.Module):
    def __init__(self, latent=6, features=8):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(latent, 16), nn.ReLU(), nn.Linear(16, features))

    def forward(self, z):
        return self.body(z)


class Critic(nn.Module):
    def __init__(self, features=8):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x)
