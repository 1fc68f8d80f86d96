import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 6))
decoder = nn.Linear(6, 10)
probe = nn.Linear(6, 3)
opt_autoencoder = torch.optim.SGD(list(encoder.parameters()) + list(decoder.parameters()), lr=0.05)
opt_probe = torch.optim.SGD(probe.parameters(), lr=0.05)

for _ in range(4):
    x, y = torch.randn(8, 10), torch.randint(0, 3, (8,))
    opt_autoencoder.zero_grad()
    opt_probe.zero_grad()
    code = encoder(x)
    probe_loss = F.cross_entropy(probe(code), y)  # a linear probe of the code
    probe_loss.backward(retain_graph=True, inputs=list(probe.parameters()))
    opt_probe.step()
    recon_loss = F.mse_loss(decoder(code), x)
    recon_loss.backward()
    opt_autoencoder.step()
