import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.step_loss = 0.0

    def log_and_reset(self, i):
        print(i, float(self.step_loss))
        self.step_loss = 0.0

    def train_epoch(self, batches):
        for i, (x, y) in enumerate(batches):
            self.optimizer.zero_grad()
            loss = nn.functional.mse_loss(self.model(x), y)
            loss.backward()
            self.optimizer.step()
            self.step_loss += loss
            self.log_and_reset(i)


model = nn.Linear(4, 1)
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(5)]
trainer.train_epoch(batches)
