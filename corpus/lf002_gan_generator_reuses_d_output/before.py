import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()

for i in range(3):
    real = torch.randn(8, 8)
    noise = torch.randn(8, 4)
    fake = netG(noise)
    output_real = netD(real)
    output_fake = netD(fake)
    # (1) update D: maximize log(D(x)) + log(1 - D(G(z)))
    optimizerD.zero_grad()
    errD = criterion(output_real, torch.ones(8, 1)) + criterion(output_fake, torch.zeros(8, 1))
    errD.backward(retain_graph=True)
    optimizerD.step()
    # (2) update G: maximize log(D(G(z))), reusing D's output on the fakes
    optimizerG.zero_grad()
    errG = criterion(output_fake, torch.ones(8, 1))
    errG.backward()
    optimizerG.step()
