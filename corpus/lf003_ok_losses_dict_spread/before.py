import torch
from torch import nn

torch.manual_seed(0)
G, D = nn.Linear(4, 6), nn.Linear(6, 1)
opt_g, opt_d = torch.optim.Adam(G.parameters()), torch.optim.Adam(D.parameters())


def d_losses(real, fake):
    return {"d_real": nn.functional.softplus(-D(real)).mean(),
            "d_fake": nn.functional.softplus(D(fake.detach())).mean()}


for step in range(3):
    fake = G(torch.randn(8, 4))
    losses = d_losses(torch.randn(8, 6), fake)
    opt_d.zero_grad()
    (losses["d_real"] + losses["d_fake"]).backward()
    opt_d.step()
    losses = {**losses, "g": nn.functional.softplus(-D(fake)).mean()}
    opt_g.zero_grad()
    losses["g"].backward()
    opt_g.step()
