# Mutual learning where every peer's gradients are cleared once per batch, before the peers'
# losses: a peer's output receives gradient from the other peers' losses, and that gradient is
# still there when the peer steps.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n = 2
models = [nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 5)) for _ in range(n)]
optimizers = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in models]
kl = nn.KLDivLoss(reduction="batchmean")

for it in range(3):
    x = torch.randn(16, 10)
    y = torch.randint(0, 5, (16,))
    outputs = [m(x) for m in models]
    for optimizer in optimizers:
        optimizer.zero_grad()
    for k in range(n):
        loss = F.cross_entropy(outputs[k], y)
        loss = loss + kl(F.log_softmax(outputs[k], dim=1), F.softmax(outputs[1 - k], dim=1))
        loss.backward(retain_graph=True)
        optimizers[k].step()
