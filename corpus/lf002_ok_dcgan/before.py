import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_label, fake_label = 1.0, 0.0

for i in range(3):
    real = torch.randn(8, 8)
    netD.zero_grad()
    label = torch.full((8, 1), real_label)
    errD_real = criterion(netD(real), label)
    errD_real.backward()
    noise = torch.randn(8, 4)
    fake = netG(noise)
    label.fill_(fake_label)
    errD_fake = criterion(netD(fake.detach()), label)
    errD_fake.backward()
    optimizerD.step()
    netG.zero_grad()
    label.fill_(real_label)
    output = netD(fake)
    errG = criterion(output, label)
    errG.backward()
    optimizerG.step()
