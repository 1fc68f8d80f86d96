import torch
import torch.nn as nn

torch.manual_seed(0)


class FullBatch:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer

    def epoch(self, batches):
        self.total = 0.0
        for x, y in batches:
            self.total += nn.functional.mse_loss(self.model(x), y)
        self.optimizer.zero_grad()
        (self.total / len(batches)).backward()
        self.optimizer.step()
        print(f"loss {self.total.item():.4f}")


model = nn.Linear(4, 1)
trainer = FullBatch(model, torch.optim.SGD(model.parameters(), lr=0.1))
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(5)]
for epoch in range(2):
    trainer.epoch(batches)
