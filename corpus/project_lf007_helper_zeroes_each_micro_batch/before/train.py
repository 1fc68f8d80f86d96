import torch
import torch.nn as nn

from steps import backward_micro_batch

ACCUMULATION = 4
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    for micro in range(ACCUMULATION):
        batch = torch.randn(8, 4), torch.randn(8, 1)
        backward_micro_batch(model, batch, ACCUMULATION)
    optimizer.step()
