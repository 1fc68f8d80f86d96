import torch
from torch import nn

torch.manual_seed(0)
gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
opt_g = torch.optim.Adam(gen.parameters())
opt_d = torch.optim.Adam(disc.parameters())


def compute_losses(real, noise):
    fake = gen(noise)
    d_fake = disc(fake).mean()
    return {"d": d_fake - disc(real).mean(), "g": -d_fake}


for step in range(3):
    losses = compute_losses(torch.randn(8, 4), torch.randn(8, 4))
    opt_d.zero_grad()
    losses["d"].backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    losses["g"].backward()
    opt_g.step()
