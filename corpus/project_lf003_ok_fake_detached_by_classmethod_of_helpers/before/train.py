import torch
import torch.nn as nn

import helpers

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
discriminator = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
for step in range(3):
    fake = generator(torch.randn(8, 4))
    opt_d.zero_grad()
    loss_d = discriminator(helpers.Ops.frozen(fake)).mean() - discriminator(torch.randn(8, 2)).mean()
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g = -discriminator(fake).mean()
    loss_g.backward()
    opt_g.step()
    print(f"step {step}: D {loss_d.item():.4f} G {loss_g.item():.4f}")
