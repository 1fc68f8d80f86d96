import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(3, 12), nn.ReLU(), nn.Linear(12, 6))
netD = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-4)
optimizerD = torch.optim.Adam(netD.parameters(), lr=1e-4)

for _ in range(4):
    real = torch.randn(4, 6)
    optimizerD.zero_grad()
    optimizerG.zero_grad()
    for p in netG.parameters():  # the critic's loss must not train the generator
        p.requires_grad_(False)
    errD = netD(netG(torch.randn(4, 3))).mean() - netD(real).mean()
    errD.backward()
    optimizerD.step()
    for p in netG.parameters():
        p.requires_grad_(True)
    errG = -netD(netG(torch.randn(4, 3))).mean()
    errG.backward()
    optimizerG.step()
