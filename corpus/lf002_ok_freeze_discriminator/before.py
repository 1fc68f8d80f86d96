import torch
import torch.nn as nn

torch.manual_seed(0)
gen = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 5))
disc = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
g_opt = torch.optim.Adam(gen.parameters(), lr=1e-3)
d_opt = torch.optim.Adam(disc.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for step in range(3):
    fake = gen(torch.randn(6, 3))
    disc.requires_grad_(True)
    d_opt.zero_grad()
    d_loss = bce(disc(torch.randn(6, 5)), torch.ones(6, 1)) + bce(disc(fake.detach()), torch.zeros(6, 1))
    d_loss.backward()
    d_opt.step()
    disc.requires_grad_(False)
    g_opt.zero_grad()
    g_loss = bce(disc(fake), torch.ones(6, 1))
    g_loss.backward()
    g_opt.step()
