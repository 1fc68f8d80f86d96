import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
G = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
D = nn.Sequential(nn.Linear(8, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
class GAN(nn.Module):
    def __init__(s):
        super().__init__(); s.G = G; s.D = D
model = GAN()

for i in range(3):
    real = torch.randn(4, 8)
    opt_d.zero_grad()
    opt_g.zero_grad()
    fake = G(torch.randn(4, 16))
    d_loss = F.softplus(D(fake)).mean() + F.softplus(-D(real)).mean()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    model.zero_grad()
    g_loss = F.softplus(-D(fake)).mean()
    g_loss.backward()
    opt_g.step()
print("ok")
