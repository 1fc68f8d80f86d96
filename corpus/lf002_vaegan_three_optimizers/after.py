# A VAE-GAN with three optimizers updated one after another.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
zdim = 4
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2 * zdim))
decoder = nn.Sequential(nn.Linear(zdim, 16), nn.ReLU(), nn.Linear(16, 8))
discriminator = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
opt_enc = torch.optim.RMSprop(encoder.parameters(), lr=3e-4)
opt_dec = torch.optim.RMSprop(decoder.parameters(), lr=3e-4)
opt_dis = torch.optim.RMSprop(discriminator.parameters(), lr=3e-4)
gamma = 15.0

for i in range(4):
    x = torch.randn(16, 8)
    mu, logvar = encoder(x).chunk(2, dim=1)
    z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
    x_rec = decoder(z)
    x_p = decoder(torch.randn(16, zdim))
    d_real = discriminator(x)
    d_rec = discriminator(x_rec)
    d_p = discriminator(x_p)

    kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    rec = F.mse_loss(x_rec, x)
    ones, zeros = torch.ones_like(d_real), torch.zeros_like(d_real)
    gan = (F.binary_cross_entropy_with_logits(d_real, ones)
           + F.binary_cross_entropy_with_logits(d_rec, zeros)
           + F.binary_cross_entropy_with_logits(d_p, zeros))
    loss_enc = kl + rec
    loss_dec = gamma * rec - gan
    loss_dis = gan

    opt_enc.zero_grad()

    opt_dec.zero_grad()

    opt_dis.zero_grad()
    loss_enc.backward(retain_graph=True, inputs=list(encoder.parameters()))
    loss_dec.backward(retain_graph=True, inputs=list(decoder.parameters()))
    loss_dis.backward(inputs=list(discriminator.parameters()))
    opt_enc.step()
    opt_dec.step()
    opt_dis.step()
    print(i, loss_enc.item(), loss_dec.item(), loss_dis.item())
