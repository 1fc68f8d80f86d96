import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class EMA:
    """An exponential moving average of a model's weights, kept beside the model."""

    def __init__(self, model, decay):
        self.model = model
        self.shadow = copy.deepcopy(model)
        self.decay = decay

    @torch.no_grad()
    def update(self):
        for averaged, current in zip(self.shadow.parameters(), self.model.parameters()):
            averaged.mul_(self.decay).add_(current, alpha=1 - self.decay)


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
ema = EMA(D, 0.9)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
for step in range(4):
    real = torch.randn(5, 4)
    fake = G(torch.randn(5, 3))
    pred_real, pred_fake, pred_gen = D(real), D(fake.detach()), D(fake)
    d_loss = F.softplus(-pred_real).mean() + F.softplus(pred_fake).mean()
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    ema.update()
    pred_real, pred_fake, pred_gen = D(real), D(fake.detach()), D(fake)
    g_loss = F.softplus(-pred_gen).mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    print(step, d_loss.item(), g_loss.item())
