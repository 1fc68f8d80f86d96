import torch
import torch.nn as nn

from toolkit.optim import build

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 6))
netD = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
config = {"kind": "Adam", "lr": 2e-4}
optimizers = {name: build(config, net.parameters()) for name, net in [("G", netG), ("D", netD)]}
for step in range(3):
    fake = netG(torch.randn(5, 4))
    d_out = netD(fake)
    optimizers["D"].zero_grad()
    d_loss = d_out.mean() - netD(torch.randn(5, 6)).mean()
    d_loss.backward(retain_graph=True)
    optimizers["D"].step()
    optimizers["G"].zero_grad()
    g_loss = -d_out.mean()
    g_loss.backward()
    optimizers["G"].step()
