import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optD = torch.optim.Adam(netD.parameters(), lr=2e-4)
optG = torch.optim.Adam(netG.parameters(), lr=2e-4)
schedD = torch.optim.lr_scheduler.StepLR(optD, step_size=2, gamma=0.5)
schedG = torch.optim.lr_scheduler.StepLR(optG, step_size=2, gamma=0.5)
bce = nn.BCEWithLogitsLoss()

for i in range(4):
    real, fake = torch.randn(8, 8), netG(torch.randn(8, 4))
    optD.zero_grad()
    d_real, d_fake = netD(real), netD(fake.detach())
    (bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))).backward()
    optD.step()
    schedD.step()
    optG.zero_grad()
    g_out = netD(fake)
    bce(g_out, torch.ones_like(g_out)).backward()
    optG.step()
    schedG.step()
