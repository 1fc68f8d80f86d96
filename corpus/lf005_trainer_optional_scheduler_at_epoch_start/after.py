"""A trainer whose learning-rate schedule is optional (`lr_scheduler=None` by default): it
steps the scheduler, when there is one, at the start of each epoch, before the epoch's
batches step the optimizer."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, criterion, optimizer, data_loader, lr_scheduler=None):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.data_loader = data_loader
        self.lr_scheduler = lr_scheduler

    def train(self, epochs):
        for epoch in range(epochs):
            self.model.train()
            for data, target in self.data_loader:
                self.optimizer.zero_grad()
                loss = self.criterion(self.model(data), target)
                loss.backward()
                self.optimizer.step()
            if self.lr_scheduler is not None:
                self.lr_scheduler.step()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
loader = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
Trainer(model, nn.CrossEntropyLoss(), optimizer, loader, lr_scheduler).train(3)
