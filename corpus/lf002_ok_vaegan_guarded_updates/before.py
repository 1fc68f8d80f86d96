# A VAE-GAN with scheduled updates, written carefully.
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
dis_every = 2

for i in range(4):
    x = torch.randn(16, 8)

    # discriminator update on detached samples
    if i % dis_every == 0:
        with torch.no_grad():
            mu, logvar = encoder(x).chunk(2, dim=1)
            z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
            x_rec = decoder(z)
            x_p = decoder(torch.randn(16, zdim))
        d_real = discriminator(x)
        loss_dis = (F.binary_cross_entropy_with_logits(d_real, torch.ones_like(d_real))
                    + F.binary_cross_entropy_with_logits(discriminator(x_rec), torch.zeros_like(d_real))
                    + F.binary_cross_entropy_with_logits(discriminator(x_p), torch.zeros_like(d_real)))
        opt_dis.zero_grad()
        loss_dis.backward()
        opt_dis.step()

    # encoder + decoder update on a fresh graph
    mu, logvar = encoder(x).chunk(2, dim=1)
    z = mu + torch.randn_like(mu) * torch.exp(0.5 * logvar)
    x_rec = decoder(z)
    x_p = decoder(torch.randn(16, zdim))
    kl = -0.5 * torch.mean(1 + logvar - mu.pow(2) - logvar.exp())
    rec = F.mse_loss(x_rec, x)
    d_rec, d_p = discriminator(x_rec), discriminator(x_p)
    gan_g = (F.binary_cross_entropy_with_logits(d_rec, torch.ones_like(d_rec))
             + F.binary_cross_entropy_with_logits(d_p, torch.ones_like(d_p)))
    loss_enc = kl + rec
    loss_dec = gamma * rec + gan_g
    opt_enc.zero_grad()
    opt_dec.zero_grad()
    loss_enc.backward(retain_graph=True, inputs=list(encoder.parameters()))
    loss_dec.backward(inputs=list(decoder.parameters()))
    opt_enc.step()
    opt_dec.step()
    print(i, loss_enc.item(), loss_dec.item())
