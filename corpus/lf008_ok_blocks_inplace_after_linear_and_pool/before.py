import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    """VGG-style: the features end in a max pool and the embedding in a linear layer (neither
    keeps its output); the head starts with an in-place dropout of the embedding."""

    def __init__(self, classes=6):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(2),
        )
        self.embed = nn.Sequential(
            nn.Linear(8 * 4 * 4, 32),
            nn.ReLU(inplace=True),
            nn.Linear(32, 32),
        )
        self.head = nn.Sequential(
            nn.Dropout(0.5, inplace=True),
            nn.Linear(32, 32),
            nn.ReLU(inplace=True),
            nn.Linear(32, classes),
        )

    def forward(self, images):
        x = self.features(images).flatten(1)
        x = self.embed(x)
        return self.head(x)


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for step in range(3):
    images = torch.randn(5, 3, 8, 8)
    targets = torch.randint(0, 6, (5,))
    loss = F.cross_entropy(model(images), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
