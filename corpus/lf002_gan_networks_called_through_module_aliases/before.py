import torch
import torch.nn as nn

torch.manual_seed(0)
# Wrapped for several GPUs; the training code calls the wrapped networks through short names.
netG = nn.DataParallel(nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8)))
netD = nn.DataParallel(nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1)))
optimizerD = torch.optim.Adam(netD.module.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.module.parameters(), lr=2e-4, betas=(0.5, 0.999))
G = netG.module
D = netD.module
criterion = nn.BCEWithLogitsLoss()

for i in range(3):
    real = torch.randn(8, 8)
    fake = G(torch.randn(8, 4))
    output = D(fake)
    errD = criterion(D(real), torch.ones(8, 1)) + criterion(output, torch.zeros(8, 1))
    optimizerD.zero_grad()
    errD.backward(retain_graph=True)
    optimizerD.step()
    errG = criterion(output, torch.ones(8, 1))
    optimizerG.zero_grad()
    errG.backward()
    optimizerG.step()
