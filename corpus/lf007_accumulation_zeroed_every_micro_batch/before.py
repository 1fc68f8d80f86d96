import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
accumulation = 4
for i in range(12):
    x, y = torch.randn(2, 8), torch.randn(2, 1)
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y) / accumulation
    loss.backward()
    if (i + 1) % accumulation == 0:
        optimizer.step()
