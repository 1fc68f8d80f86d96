import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    """Trains `head_a` step by step and `head_b` on the whole epoch: `head_b`'s losses are
    summed into `self.total_b`, backpropagated once after the epoch through a name."""

    def __init__(self):
        self.head_a = nn.Linear(4, 1)
        self.head_b = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.opt_a = torch.optim.SGD(self.head_a.parameters(), lr=0.1)
        self.opt_b = torch.optim.SGD(self.head_b.parameters(), lr=0.1)
        self.total_b = 0.0

    def train_epoch(self, batches, full_batch_total="total_b"):
        for x, y in batches:
            loss_a = (self.head_a(x) - y).pow(2).mean()
            self.opt_a.zero_grad()
            loss_a.backward()
            self.opt_a.step()
            self.total_b += (self.head_b(x) - y).pow(2).mean()
        print(f"epoch loss of b: {float(self.total_b):.4f}")
        self.opt_b.zero_grad()
        getattr(self, full_batch_total).backward()
        self.opt_b.step()
        self.total_b = 0.0


trainer = Trainer()
batches = [(torch.randn(5, 4), torch.randn(5, 1)) for _ in range(6)]
for epoch in range(2):
    trainer.train_epoch(batches)
