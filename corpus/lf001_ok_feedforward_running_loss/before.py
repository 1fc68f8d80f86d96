import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
running_loss = 0.0
for step in range(8):
    x, y = torch.randn(16, 10), torch.randn(16, 1)
    loss = nn.functional.mse_loss(model(x), y) / 2
    loss.backward()
    running_loss += loss.item()
    if (step + 1) % 2 == 0:
        optimizer.step()
        optimizer.zero_grad()
print(f"running loss {running_loss:.4f}")
