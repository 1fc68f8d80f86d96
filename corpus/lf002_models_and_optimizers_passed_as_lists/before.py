import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def train_epoch(models, optimizers, loader, criterion):
    [generator, discriminator] = models
    [opt_g, opt_d] = optimizers
    for (real,) in loader:
        ones, zeros = torch.ones(real.size(0), 1), torch.zeros(real.size(0), 1)
        fake = generator(torch.randn(real.size(0), 4))
        d_loss = criterion(discriminator(real), ones) + criterion(
            discriminator(fake.detach()), zeros
        )
        g_loss = criterion(discriminator(fake), ones)

        opt_d.zero_grad()
        d_loss.backward()
        opt_d.step()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
    return d_loss.item(), g_loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    net_g = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
    net_d = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
    adam_g = torch.optim.Adam(net_g.parameters(), lr=2e-4)
    adam_d = torch.optim.Adam(net_d.parameters(), lr=2e-4)
    models = [net_g, net_d]
    optimizers = [adam_g, adam_d]
    loader = DataLoader(TensorDataset(torch.randn(32, 8)), batch_size=8, shuffle=True)
    for epoch in range(2):
        print(epoch, train_epoch(models, optimizers, loader, nn.BCEWithLogitsLoss()))
