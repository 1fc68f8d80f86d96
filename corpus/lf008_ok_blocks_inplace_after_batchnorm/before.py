import torch
import torch.nn as nn


class Discriminator(nn.Module):
    """DCGAN-style: each block ends in a batch norm; the next one starts with its activation."""

    def __init__(self, width=8):
        super().__init__()
        self.down1 = nn.Sequential(
            nn.Conv2d(3, width, 4, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(width),
        )
        self.down2 = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(width, width * 2, 4, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(width * 2),
        )
        self.out = nn.Sequential(
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(width * 2, 1, 4),
        )

    def forward(self, images):
        return self.out(self.down2(self.down1(images))).view(-1)


torch.manual_seed(0)
netD = Discriminator()
optimizer = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()
for step in range(3):
    images = torch.randn(4, 3, 16, 16)
    labels = torch.randint(0, 2, (4,)).float()
    loss = criterion(netD(images), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
