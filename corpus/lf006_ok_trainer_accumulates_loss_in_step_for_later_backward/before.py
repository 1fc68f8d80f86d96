import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    """Gradient accumulation: each step adds its loss to a total that the trainer
    backpropagates once every `accumulate` steps."""

    def __init__(self, model, optimizer, accumulate=4):
        self.model = model
        self.optimizer = optimizer
        self.criterion = nn.MSELoss()
        self.accumulate = accumulate
        self.pending_loss = 0.0

    def train_step(self, x, y):
        loss = self.criterion(self.model(x), y)
        self.pending_loss += loss / self.accumulate

    def apply_update(self):
        self.optimizer.zero_grad()
        self.pending_loss.backward()
        self.optimizer.step()
        print(f"update loss {self.pending_loss.item():.4f}")
        self.pending_loss = 0.0

    def train_epoch(self, batches):
        for i, (x, y) in enumerate(batches):
            self.train_step(x, y)
            if (i + 1) % self.accumulate == 0:
                self.apply_update()


model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(8)]
for epoch in range(2):
    trainer.train_epoch(batches)
