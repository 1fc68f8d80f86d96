"""A GAN whose discriminator is run once on the fake batch for both losses: the generator's
loss object backpropagates through the discriminator its loss object has just stepped."""

import torch
import torch.nn as nn

from losses import DiscriminatorLoss, GeneratorLoss

if __name__ == "__main__":
    torch.manual_seed(0)
    generator = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 4))
    discriminator = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
    d_criterion = DiscriminatorLoss(torch.optim.Adam(discriminator.parameters(), lr=1e-3))
    g_criterion = GeneratorLoss(torch.optim.Adam(generator.parameters(), lr=1e-3))
    for step in range(4):
        real = torch.randn(5, 4)
        fake = generator(torch.randn(5, 3))
        real_logits, fake_logits = discriminator(real), discriminator(fake)
        d_loss = d_criterion(real_logits, fake_logits.detach())
        g_loss = g_criterion(fake_logits)
        print(step, d_loss, g_loss)
