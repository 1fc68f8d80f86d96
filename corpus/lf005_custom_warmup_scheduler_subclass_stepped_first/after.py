import torch
import torch.nn as nn
from torch.optim.lr_scheduler import _LRScheduler


class WarmUpLR(_LRScheduler):
    """Linear warm-up over `total_iters` batches (pytorch-cifar100's)."""

    def __init__(self, optimizer, total_iters, last_epoch=-1):
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base_lr * self.last_epoch / (self.total_iters + 1e-8) for base_lr in self.base_lrs]


torch.manual_seed(0)
net = nn.Linear(4, 3)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
loader = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(3)]
warmup_scheduler = WarmUpLR(optimizer, total_iters=2 * len(loader))
for epoch in range(1, 3):
    for images, labels in loader:
        optimizer.zero_grad()
        loss = criterion(net(images), labels)
        loss.backward()
        optimizer.step()
        warmup_scheduler.step()
        print(epoch, optimizer.param_groups[0]["lr"], loss.item())
