import torch
from torch import nn

torch.manual_seed(0)
autoencoder = nn.Sequential(nn.Linear(6, 3), nn.ReLU(), nn.Linear(3, 6))
optimizer = torch.optim.SGD(autoencoder.parameters(), lr=0.05)

for batch in range(5):
    optimizer.zero_grad()
    x = torch.randn(10, 6)
    recon = autoencoder(x)
    mse = (recon - x).pow(2).mean()
    sparsity = recon.abs().mean()
    mse.backward()
    optimizer.step()
    recon = autoencoder(x)
    sparsity = recon.abs().mean()
    sparsity.backward()
    optimizer.step()
