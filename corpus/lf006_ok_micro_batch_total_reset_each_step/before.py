import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
accumulation_steps = 4
for step in range(3):
    optimizer.zero_grad()
    step_loss = 0.0
    for micro in range(accumulation_steps):
        x, y = torch.randn(8, 8), torch.randn(8, 1)
        loss = nn.functional.mse_loss(model(x), y) / accumulation_steps
        loss.backward()
        step_loss += loss
    optimizer.step()
    print(f"step {step}: loss {step_loss.item():.4f}")
