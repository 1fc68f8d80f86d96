# A loss collector for gradient accumulation: add() keeps each micro-batch's loss in a list and
# total() stacks them for the one backward of the step, which needs every graph.
import torch
import torch.nn as nn


class LossCollector:
    def __init__(self):
        self.parts = []

    def add(self, value):
        self.parts.append(value)

    def total(self):
        return torch.stack(self.parts).mean()

    def clear(self):
        self.parts = []


torch.manual_seed(0)
regressor = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Linear(10, 1))
optimizer = torch.optim.Adam(regressor.parameters(), lr=1e-2)
collector = LossCollector()

for step in range(3):
    collector.clear()
    for micro in range(4):
        x, y = torch.randn(2, 5), torch.randn(2, 1)
        collector.add(nn.functional.mse_loss(regressor(x), y))
    optimizer.zero_grad()
    collector.total().backward()
    optimizer.step()
