import torch
import torch.nn as nn
import torch.nn.functional as F


def critic_hinge_loss(d_real, d_fake):
    return F.relu(1.0 - d_real).mean() + F.relu(1.0 + d_fake).mean()


torch.manual_seed(0)
nz, n_critic, n_batches = 8, 2, 3
netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 4))
netD = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optD = torch.optim.Adam(netD.parameters(), lr=1e-4, betas=(0.0, 0.9))
optG = torch.optim.Adam(netG.parameters(), lr=1e-4, betas=(0.0, 0.9))

for epoch in range(2):
    for i in range(n_batches):
        global_step = epoch * n_batches + i
        real = torch.randn(16, 4)
        fake = netG(torch.randn(16, nz))
        d_fake = netD(fake)

        optD.zero_grad()
        errD = critic_hinge_loss(netD(real), d_fake)
        errD.backward(retain_graph=True)
        optD.step()

        if global_step % n_critic == 0:
            optG.zero_grad()
            errG = -d_fake.mean()
            errG.backward()
            optG.step()
