import torch
import torch.nn as nn


class Discriminator(nn.Module):
    """The DCGAN discriminator: LeakyReLU(0.2, inplace=True) after convolutions and batch
    norms, neither of which keeps its output."""

    def __init__(self, ndf=8):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(3, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),
            nn.Sigmoid(),
        )
        self.conv = nn.Conv2d(3, 3, 1)
        self.lrelu = nn.LeakyReLU(0.2, inplace=True)

    def forward(self, x):
        x = self.conv(x)
        x = self.lrelu(x)
        return self.main(x).view(-1)


torch.manual_seed(0)
netD = Discriminator()
optimizer = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCELoss()
for _ in range(3):
    real = torch.randn(4, 3, 16, 16)
    netD.zero_grad()
    loss = criterion(netD(real), torch.ones(4))
    loss.backward()
    optimizer.step()
