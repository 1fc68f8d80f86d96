# Multi-task learning: a shared encoder and two heads, one optimizer for each of the three.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU())
head_a = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))
head_b = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
opt_enc = torch.optim.Adam(encoder.parameters(), lr=1e-3)
opt_a = torch.optim.Adam(head_a.parameters(), lr=1e-3)
opt_b = torch.optim.Adam(head_b.parameters(), lr=1e-3)

for i in range(4):
    x = torch.randn(32, 12)
    y_a = torch.randint(0, 4, (32,))
    y_b = torch.randn(32, 1)
    feat = encoder(x)
    loss_a = F.cross_entropy(head_a(feat), y_a)
    loss_b = F.mse_loss(head_b(feat), y_b)

    opt_enc.zero_grad()
    opt_a.zero_grad()

    opt_b.zero_grad()
    loss_a.backward(retain_graph=True)
    loss_b.backward(inputs=list(head_b.parameters()))
    opt_a.step()
    opt_enc.step()
    opt_b.step()
    print(i, loss_a.item(), loss_b.item())
