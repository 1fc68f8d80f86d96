import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0)
val_x, val_y = torch.randn(8, 4), torch.randn(8, 1)
val_loss = float("inf")

for epoch in range(3):
    scheduler.step(val_loss)
    for _ in range(2):
        x, y = torch.randn(4, 4), torch.randn(4, 1)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    with torch.no_grad():
        val_loss = nn.functional.mse_loss(model(val_x), val_y).item()
