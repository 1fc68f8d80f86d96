import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 16), nn.LeakyReLU(0.2))
        self.head = nn.Linear(16, 1)

    def forward(self, x):
        features = self.body(x)
        return self.head(features), features


torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 6))
netD = Discriminator()
optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

for it in range(3):
    source, real = torch.randn(8, 4), torch.randn(8, 6)
    fake = netG(source)
    pred_real, feats_real = netD(real)
    pred_fake, _ = netD(fake.detach())
    loss_D = 0.5 * ((pred_real - 1).pow(2).mean() + pred_fake.pow(2).mean())
    optD.zero_grad()
    loss_D.backward(retain_graph=True)
    optD.step()

    # generator: adversarial loss on the stepped discriminator, plus feature matching
    pred_fake, feats_fake = netD(fake)
    loss_G = (pred_fake - 1).pow(2).mean() + 10 * (feats_fake - feats_real).abs().mean()
    optG.zero_grad()
    loss_G.backward()
    optG.step()
