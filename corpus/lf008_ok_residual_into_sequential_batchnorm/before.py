import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    """The residual branch is one Sequential ending in a batch norm; the shortcut is added
    into its output in place."""

    def __init__(self, channels=8, squeeze=4):
        super().__init__()
        self.branch = nn.Sequential(
            nn.Conv2d(channels, squeeze, 1, bias=False),
            nn.BatchNorm2d(squeeze),
            nn.ReLU(inplace=True),
            nn.Conv2d(squeeze, channels, 3, padding=1, bias=False),
            nn.BatchNorm2d(channels),
        )

    def forward(self, x):
        out = self.branch(x)
        out += x
        return F.relu(out)


class Net(nn.Module):
    def __init__(self, classes=4):
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.block = Bottleneck()
        self.fc = nn.Linear(8, classes)

    def forward(self, images):
        x = self.block(self.stem(images))
        return self.fc(x.mean(dim=(2, 3)))


torch.manual_seed(0)
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
for step in range(3):
    images = torch.randn(4, 3, 8, 8)
    targets = torch.randint(0, 4, (4,))
    loss = F.cross_entropy(net(images), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
