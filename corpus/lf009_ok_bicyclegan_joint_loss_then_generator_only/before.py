import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Linear(6, 4)  # image -> (mu, logvar)
generator = nn.Linear(6 + 2, 6)  # (image, z) -> image
discriminator = nn.Sequential(nn.Linear(6, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
optimizer_E = torch.optim.Adam(encoder.parameters(), lr=2e-4)
optimizer_G = torch.optim.Adam(generator.parameters(), lr=2e-4)

for _ in range(3):
    real_A, real_B = torch.randn(4, 6), torch.randn(4, 6)
    optimizer_E.zero_grad()
    optimizer_G.zero_grad()
    # BicycleGAN: the encoder + generator loss trains both networks...
    mu, logvar = encoder(real_B).chunk(2, dim=1)
    encoded_z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
    fake_B = generator(torch.cat([real_A, encoded_z], dim=1))
    loss_pixel = F.l1_loss(fake_B, real_B)
    loss_kl = 0.5 * torch.sum(torch.exp(logvar) + mu**2 - logvar - 1)
    sampled_z = torch.randn(4, 2)
    _fake_B = generator(torch.cat([real_A, sampled_z], dim=1))
    loss_gan = -discriminator(fake_B).mean() - discriminator(_fake_B).mean()
    loss_GE = loss_gan + 10 * loss_pixel + 0.01 * loss_kl
    loss_GE.backward(retain_graph=True)
    optimizer_E.step()
    # ...and the latent regression loss the generator alone
    _mu, _ = encoder(_fake_B).chunk(2, dim=1)
    loss_latent = F.l1_loss(_mu, sampled_z)
    loss_latent.backward()
    optimizer_G.step()
