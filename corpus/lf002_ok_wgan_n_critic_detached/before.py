# A WGAN-style loop with n_critic, written carefully.
import torch
import torch.nn as nn

torch.manual_seed(0)
nz = 8
netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 4))
netD = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optD = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.5, 0.9))
optG = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.5, 0.9))
n_critic = 2

for i in range(5):
    real = torch.randn(16, 4)
    noise = torch.randn(16, nz)
    fake = netG(noise)

    optD.zero_grad()
    errD = netD(fake.detach()).mean() - netD(real).mean()
    errD.backward()
    optD.step()

    if i % n_critic == 0:
        optG.zero_grad()
        errG = -netD(fake).mean()
        errG.backward()
        optG.step()
    print(i, errD.item())
