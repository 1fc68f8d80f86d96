import itertools

import torch
import torch.nn as nn

torch.manual_seed(0)
# InfoGAN: the generator is run once for the discriminator's loss and once more for its own
# (its batch norm updates its running statistics each time); the information loss reuses the
# second run after the generator's step.
G = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 6))
D = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
G_optimizer = torch.optim.Adam(G.parameters(), lr=1e-2)
D_optimizer = torch.optim.Adam(D.parameters(), lr=1e-2)
info_optimizer = torch.optim.Adam(itertools.chain(G.parameters(), D.parameters()), lr=1e-2)

for step in range(3):
    x_ = torch.randn(5, 6)
    z_ = torch.randn(5, 4)
    D_optimizer.zero_grad()
    D_real = D(x_)[:, :1]
    G_ = G(z_)
    D_fake = D(G_.detach())[:, :1]
    D_loss = torch.mean(D_fake) - torch.mean(D_real)
    D_loss.backward()
    D_optimizer.step()

    G_optimizer.zero_grad()
    G_ = G(z_)
    out = D(G_)
    D_fake, D_cont = out[:, :1], out[:, 1:]
    G_loss = -torch.mean(D_fake)
    G_loss.backward()
    G_optimizer.step()

    info_optimizer.zero_grad()
    G_ = G(z_)
    out = D(G_)
    D_fake, D_cont = out[:, :1], out[:, 1:]
    info_loss = torch.mean(D_cont**2)
    info_loss.backward()
    info_optimizer.step()
