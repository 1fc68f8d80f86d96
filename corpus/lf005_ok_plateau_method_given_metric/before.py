# A trainer whose adjust() steps a ReduceLROnPlateau with the last validation loss at the start
# of each epoch: a plateau scheduler is stepped with a metric, whenever it is known.
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-2)
        self.plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(self.optimizer, patience=0)

    def adjust(self, val_loss):
        self.plateau.step(val_loss)

    def train_step(self, x, y):
        self.optimizer.zero_grad()
        loss = nn.functional.mse_loss(self.model(x), y)
        loss.backward()
        self.optimizer.step()

    def validate(self, x, y):
        with torch.no_grad():
            return nn.functional.mse_loss(self.model(x), y).item()


torch.manual_seed(0)
trainer = Trainer()
train = [(torch.randn(6, 4), torch.randn(6, 1)) for _ in range(3)]
held_out = (torch.randn(6, 4), torch.randn(6, 1))
val_loss = float("inf")
for epoch in range(3):
    trainer.adjust(val_loss)
    for x, y in train:
        trainer.train_step(x, y)
    val_loss = trainer.validate(*held_out)
