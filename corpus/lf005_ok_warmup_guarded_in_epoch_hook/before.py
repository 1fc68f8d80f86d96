# A trainer's on_epoch_start() hook steps the cosine schedule at the start of every epoch but the
# first, i.e. after the previous epoch's optimizer steps: the documented schedule.
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, epochs):
        self.net = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 2))
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.1)
        self.cosine = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=epochs)

    def on_epoch_start(self, epoch):
        if epoch > 0:
            self.cosine.step()

    def step(self, x, y):
        self.optimizer.zero_grad()
        nn.functional.cross_entropy(self.net(x), y).backward()
        self.optimizer.step()


torch.manual_seed(0)
trainer = Trainer(epochs=3)
batches = [(torch.randn(4, 5), torch.randint(0, 2, (4,))) for _ in range(3)]
for epoch in range(3):
    trainer.on_epoch_start(epoch)
    for x, y in batches:
        trainer.step(x, y)
