import torch
import torch.nn as nn

torch.manual_seed(0)
nz, n_critic = 4, 3
netG = nn.Sequential(nn.Linear(nz, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optimizerD = torch.optim.RMSprop(netD.parameters(), lr=5e-5)
optimizerG = torch.optim.RMSprop(netG.parameters(), lr=5e-5)

for it in range(3):
    noise = torch.randn(16, nz)
    fake = netG(noise)
    score_fake = netD(fake)  # the critic's score the generator's loss uses

    optimizerG.zero_grad()
    errG = -score_fake.mean()
    errG.backward(inputs=list(netG.parameters()))
    for _ in range(n_critic):
        real = torch.randn(16, 8)
        optimizerD.zero_grad()
        errD = netD(fake.detach()).mean() - netD(real).mean()
        errD.backward()
        optimizerD.step()
        for p in netD.parameters():
            p.data.clamp_(-0.01, 0.01)
    optimizerG.step()
