import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, criterion, optimizer, scheduler=None):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.scheduler = scheduler

    def train_epoch(self, loader):
        self.model.train()
        for inputs, targets in loader:
            loss = self.criterion(self.model(inputs), targets)
            loss.backward()
            self.optimizer.step()
        if self.scheduler is not None:
            self.scheduler.step()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
loader = [(torch.randn(12, 8), torch.randint(0, 3, (12,))) for _ in range(4)]
trainer = Trainer(model, nn.CrossEntropyLoss(), optimizer)
for epoch in range(2):
    trainer.train_epoch(loader)
