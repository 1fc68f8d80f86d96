import torch
import torch.nn as nn

# DP-SGD by hand: each sample's gradient is taken alone, clipped, and the clipped gradients
# are summed before the step; zero_grad() inside the per-sample loop is what makes it per sample
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
params = list(model.parameters())
for step in range(5):
    x, y = torch.randn(4, 8), torch.randn(4, 1)
    summed = [torch.zeros_like(p) for p in params]
    for i in range(x.shape[0]):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(x[i : i + 1]), y[i : i + 1])
        loss.backward()
        norm = torch.sqrt(sum((p.grad**2).sum() for p in params))
        scale = min(1.0, 1.0 / (norm.item() + 1e-6))
        for total, p in zip(summed, params):
            total += p.grad * scale
    for total, p in zip(summed, params):
        p.grad = total / x.shape[0]
    optimizer.step()
