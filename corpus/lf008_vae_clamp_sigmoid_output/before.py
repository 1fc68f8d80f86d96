import torch
import torch.nn as nn
import torch.nn.functional as F


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(16, 8)
        self.mu = nn.Linear(8, 2)
        self.logvar = nn.Linear(8, 2)
        self.dec = nn.Linear(2, 16)

    def forward(self, x):
        h = F.relu(self.enc(x))
        mu, logvar = self.mu(h), self.logvar(h)
        z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
        recon = torch.sigmoid(self.dec(z))
        recon.clamp_(1e-6, 1 - 1e-6)  # keep BCE finite
        return recon, mu, logvar


torch.manual_seed(0)
vae = VAE()
optimizer = torch.optim.Adam(vae.parameters(), lr=1e-3)
data = torch.rand(32, 16)
for start in range(0, 32, 8):
    x = data[start : start + 8]
    recon, mu, logvar = vae(x)
    kl = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = F.binary_cross_entropy(recon, x, reduction="sum") + kl
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
