import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.criterion = nn.CrossEntropyLoss()

    def validate(self, batches):
        self.model.eval()
        running = 0.0
        for x, y in batches:
            running = running + self.criterion(self.model(x), y)
        print("validation loss %.4f" % (running / len(batches)))
        self.model.train()

    def fit(self, train_batches, val_batches, epochs):
        for epoch in range(epochs):
            for x, y in train_batches:
                loss = self.criterion(self.model(x), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            self.validate(val_batches)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 12), nn.Tanh(), nn.Linear(12, 3))
train_batches = [(torch.randn(8, 5), torch.randint(0, 3, (8,))) for _ in range(2)]
val_batches = [(torch.randn(8, 5), torch.randint(0, 3, (8,))) for _ in range(2)]
Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1)).fit(train_batches, val_batches, 2)
