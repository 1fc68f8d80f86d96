import torch
import torch.nn as nn
import torch.nn.functional as F


class Probe(nn.Module):
    """A pretrained encoder (ending in a ReLU) with a new head that starts with an in-place
    ReLU; the encoder is frozen, so its output does not require grad and nothing keeps it."""

    def __init__(self, width=8, classes=3):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1),
            nn.ReLU(),
        )
        self.head = nn.Sequential(
            nn.ReLU(inplace=True),
            nn.Conv2d(width, classes, 1),
        )

    def forward(self, images):
        return self.head(self.encoder(images)).mean(dim=(2, 3))


torch.manual_seed(0)
model = Probe()
model.encoder.requires_grad_(False)
optimizer = torch.optim.SGD(model.head.parameters(), lr=0.1)
for step in range(3):
    images = torch.randn(4, 3, 10, 10)
    targets = torch.randint(0, 3, (4,))
    loss = F.cross_entropy(model(images), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
