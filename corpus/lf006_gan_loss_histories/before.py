import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
bce = nn.BCEWithLogitsLoss()
G_losses, D_losses = [], []
for i in range(4):
    real, fake = torch.randn(8, 8), netG(torch.randn(8, 4))
    optD.zero_grad()
    d_real, d_fake = netD(real), netD(fake.detach())
    errD = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
    errD.backward()
    optD.step()
    optG.zero_grad()
    g_out = netD(fake)
    errG = bce(g_out, torch.ones_like(g_out))
    errG.backward()
    optG.step()
    G_losses.append(errG)
    D_losses.append(errD)
print("G", len(G_losses), "D", len(D_losses))
