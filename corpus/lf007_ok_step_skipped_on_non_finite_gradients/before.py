import torch
import torch.nn as nn
import torch.nn.functional as F


def has_overflow(parameters):
    return any(p.grad is not None and not torch.isfinite(p.grad).all() for p in parameters)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
applied = []
for iteration in range(6):
    x, y = torch.randn(16, 10), torch.randn(16, 1)
    if iteration == 2:
        x[0, 0] = float("inf")  # one corrupted batch
    optimizer.zero_grad()
    F.mse_loss(model(x), y).backward()
    overflow = has_overflow(model.parameters())
    if not overflow:
        optimizer.step()
        applied.append(iteration)
assert applied == [0, 1, 3, 4, 5], applied
assert all(torch.isfinite(p).all() for p in model.parameters())
