import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
D = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_g = torch.optim.Adam(G.parameters(), 1e-3)
opt_d = torch.optim.Adam(D.parameters(), 1e-3)
for it in range(3):
    real = torch.randn(8, 4)
    fake = G(torch.randn(8, 8))
    d_fake = D(fake)
    alpha = torch.rand(8, 1)
    interp = alpha * real + (1 - alpha) * fake
    grads = torch.autograd.grad(D(interp).sum(), interp)[0]
    gp = ((grads.norm(2, dim=1) - 1) ** 2).mean()
    d_loss = d_fake.mean() - D(real).mean() + 10 * gp
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    d_fake = D(fake)
    g_loss = -d_fake.mean()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
