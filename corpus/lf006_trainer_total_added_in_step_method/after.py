import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.criterion = nn.MSELoss()
        self.running_loss = 0.0

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = self.criterion(self.model(x), y)
        loss.backward()
        self.optimizer.step()
        self.running_loss += loss.detach()

    def train_epoch(self, batches):
        self.running_loss = 0.0
        for x, y in batches:
            self.train_step(x, y)
        print(f"epoch loss {self.running_loss / len(batches):.4f}")


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(5)]
for epoch in range(2):
    trainer.train_epoch(batches)
