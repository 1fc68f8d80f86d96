import torch
import torch.nn as nn
import torch.nn.functional as F


class PreActNet(nn.Module):
    """A stem that ends in a ReLU, followed by pre-activation stages that start with one."""

    def __init__(self, width=8, classes=5):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width),
            nn.ReLU(),
        )
        self.stage = nn.Sequential(
            nn.ReLU(inplace=True),
            nn.Conv2d(width, width * 2, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(width * 2),
        )
        self.fc = nn.Linear(width * 2, classes)

    def forward(self, images):
        x = self.stem(images)
        x = self.stage(x)
        return self.fc(x.mean(dim=(2, 3)))


torch.manual_seed(0)
net = PreActNet()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
for step in range(3):
    images = torch.randn(6, 3, 12, 12)
    targets = torch.randint(0, 5, (6,))
    loss = F.cross_entropy(net(images), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
