import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
losses = []
for step in range(6):
    x = torch.randn(4, 6)
    loss = nn.functional.mse_loss(net(x), x.sum(dim=1, keepdim=True))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.detach())
print("mean", sum(losses) / len(losses), "last", losses[-1].item())
