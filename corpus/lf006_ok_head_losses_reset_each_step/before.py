import torch
import torch.nn as nn


class MultiHeadTrainer:
    def __init__(self):
        self.trunk = nn.Linear(8, 16)
        self.heads = nn.ModuleList([nn.Linear(16, 1) for _ in range(3)])
        self.optimizers = [torch.optim.SGD(head.parameters(), lr=0.1) for head in self.heads]
        self.trunk_optimizer = torch.optim.SGD(self.trunk.parameters(), lr=0.1)

    def fit(self, steps):
        torch.manual_seed(0)
        for step in range(steps):
            x, y = torch.randn(4, 8), torch.randn(4, 1)
            features = self.trunk(x).detach()
            head_loss = 0.0
            for head, optimizer in zip(self.heads, self.optimizers):
                optimizer.zero_grad()
                loss = nn.functional.mse_loss(head(features), y)
                loss.backward()
                optimizer.step()
                head_loss += loss
            print(f"step {step}: heads {head_loss.item():.3f}")


MultiHeadTrainer().fit(3)
