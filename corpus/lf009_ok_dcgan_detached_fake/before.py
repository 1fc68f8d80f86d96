import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1), nn.Sigmoid())
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCELoss()

for real in [torch.randn(6, 8) for _ in range(4)]:
    label = torch.ones(real.size(0), 1)
    # (1) Update D: maximize log(D(x)) + log(1 - D(G(z)))
    netD.zero_grad()
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    fake = netG(torch.randn(real.size(0), 4))
    errD_fake = criterion(netD(fake.detach()), torch.zeros(real.size(0), 1))
    errD_fake.backward()
    optimizerD.step()
    # (2) Update G: maximize log(D(G(z)))
    netG.zero_grad()
    errG = criterion(netD(fake), label)
    errG.backward()
    optimizerG.step()
