import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 4))
C = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=1e-4, betas=(0.0, 0.9))
opt_C = torch.optim.Adam(C.parameters(), lr=1e-4, betas=(0.0, 0.9))
for it in range(2):
    for _ in range(3):
        real, fake = torch.randn(8, 4), G(torch.randn(8, 2)).detach()
        alpha = torch.rand(8, 1)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        grad = torch.autograd.grad(C(mixed).sum(), mixed, create_graph=True)[0]
        penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
        loss_C = C(fake).mean() - C(real).mean() + 10 * penalty
        opt_C.zero_grad()
        loss_C.backward()
        opt_C.step()
    loss_G = -C(G(torch.randn(8, 2))).mean()
    opt_G.zero_grad()
    loss_G.backward()
    opt_G.step()
