# A GAN with a guarded discriminator update, written carefully.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
nz = 8
netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 4))
netD = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
d_every = 2

for i in range(5):
    real = torch.randn(16, 4)
    noise = torch.randn(16, nz)
    fake = netG(noise)

    if i % d_every == 0:
        optD.zero_grad()
        errD = F.softplus(netD(fake.detach())).mean() + F.softplus(-netD(real)).mean()
        errD.backward()
        optD.step()

    optG.zero_grad()
    errG = F.softplus(-netD(fake)).mean()
    errG.backward()
    optG.step()
    print(i, errG.item())
