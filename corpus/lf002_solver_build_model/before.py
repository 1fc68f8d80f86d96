import torch
import torch.nn as nn


class Disc(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.LeakyReLU(0.01), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x)


class Gen(nn.Module):
    def __init__(self, dim=12):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, 32), nn.ReLU(), nn.Linear(32, dim))

    def forward(self, x):
        return x + self.net(x)


class Solver:
    def __init__(self, num_iters=3, lr=1e-4):
        self.num_iters = num_iters
        self.lr = lr
        self.build_model()

    def build_model(self):
        self.G = Gen()
        self.D = Disc()
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), self.lr, (0.5, 0.999))
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), self.lr, (0.5, 0.999))

    def reset_grad(self):
        self.g_optimizer.zero_grad()
        self.d_optimizer.zero_grad()

    def train(self):
        for i in range(self.num_iters):
            x_real = torch.randn(16, 12)
            x_fake = self.G(x_real)
            out_fake = self.D(x_fake)
            d_loss = -self.D(x_real).mean() + out_fake.mean()
            self.reset_grad()
            d_loss.backward(retain_graph=True)
            self.d_optimizer.step()

            g_loss = -out_fake.mean() + (x_fake - x_real).abs().mean()
            self.reset_grad()
            g_loss.backward()
            self.g_optimizer.step()


torch.manual_seed(0)
solver = Solver()
solver.train()
