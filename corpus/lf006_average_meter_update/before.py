# The ImageNet example's AverageMeter, given the loss tensor instead of loss.item(): its
# update() adds val * n to self.sum, so the meter keeps every batch's graph for the epoch.
import torch
import torch.nn as nn


class RunningAverage:
    """The running mean of a quantity, weighted by batch size."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.last = 0
        self.sum = 0
        self.count = 0
        self.avg = 0

    def update(self, val, n=1):
        self.last = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

    def __str__(self):
        return f"{self.last:.4f} ({self.avg:.4f})"


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
loader = [(torch.randn(16, 12), torch.randint(0, 4, (16,))) for _ in range(6)]
train_loss = RunningAverage()

for epoch in range(2):
    train_loss.reset()
    for images, target in loader:
        loss = nn.functional.cross_entropy(model(images), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        train_loss.update(loss, images.size(0))
    print(f"epoch {epoch} loss {train_loss}")
