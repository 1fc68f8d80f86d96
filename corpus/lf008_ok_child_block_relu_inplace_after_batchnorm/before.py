import torch
import torch.nn as nn


class PreActConv(nn.Module):
    """Activation first, then convolution (a pre-activation block)."""

    def __init__(self, channels):
        super().__init__()
        self.act = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        x = self.act(x)
        return self.conv(x)


class Unit(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.bn = nn.BatchNorm2d(channels)
        self.block = PreActConv(channels)

    def forward(self, x):
        x = self.bn(self.stem(x))
        return self.block(x)


torch.manual_seed(0)
model = Unit(8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    loss = model(torch.randn(2, 3, 8, 8)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
