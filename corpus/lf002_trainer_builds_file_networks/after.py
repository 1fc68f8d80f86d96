import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 5))

    def forward(self, x):
        return self.net(x)


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.score = nn.Linear(5, 1)

    def forward(self, x):
        return self.score(x)


class Solver:
    def __init__(self, lr=1e-3):
        self.build_model(lr)

    def build_model(self, lr):
        self.E = Encoder()
        self.C = Critic()
        self.e_optimizer = torch.optim.Adam(self.E.parameters(), lr)
        self.c_optimizer = torch.optim.Adam(self.C.parameters(), lr)

    def train_step(self, x, target):
        code = self.E(x)
        c_out = self.C(code).mean()
        c_loss = (c_out - 1) ** 2
        self.c_optimizer.zero_grad()
        self.e_optimizer.zero_grad()
        c_loss.backward(retain_graph=True, inputs=list(self.C.parameters()))
        e_loss = ((code - target) ** 2).mean() - c_out
        e_loss.backward(inputs=list(self.E.parameters()))
        self.c_optimizer.step()
        self.e_optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    solver = Solver()
    for _ in range(4):
        solver.train_step(torch.randn(6, 5), torch.randn(6, 5))
