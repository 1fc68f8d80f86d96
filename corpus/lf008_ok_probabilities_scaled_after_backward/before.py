import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(6, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.BCEWithLogitsLoss()
for step in range(4):
    x, y = torch.randn(8, 6), torch.rand(8, 3).round()
    logits = model(x)
    loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    probs = torch.sigmoid(logits)  # for the log only, after the backward
    probs *= 100.0
    probs.clamp_(0, 100)
    print(f"step {step} loss {loss.item():.3f} mean prob {probs.mean().item():.1f}%")
