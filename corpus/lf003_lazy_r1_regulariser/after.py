# A GAN discriminator with a lazy R1 gradient penalty, as StyleGAN2 schedules it.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
netD = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
netG = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optD = torch.optim.Adam(netD.parameters(), lr=2e-3, betas=(0.0, 0.99))
r1_every = 2
r1_gamma = 10.0

for i in range(5):
    real = torch.randn(16, 4).requires_grad_(True)
    with torch.no_grad():
        fake = netG(torch.randn(16, 8))
    real_pred = netD(real)
    fake_pred = netD(fake)
    d_loss = F.softplus(fake_pred).mean() + F.softplus(-real_pred).mean()
    optD.zero_grad()
    d_loss.backward()
    optD.step()

    if i % r1_every == 0:
        real_pred = netD(real)
        grad_real, = torch.autograd.grad(real_pred.sum(), real, create_graph=True)
        r1_loss = grad_real.pow(2).sum(1).mean()
        optD.zero_grad()
        (r1_gamma / 2 * r1_loss * r1_every).backward()
        optD.step()
    print(i, d_loss.item())
