import torch
import torch.nn as nn
import torch.nn.functional as F


class GAN(nn.Module):
    def __init__(self, latent_dim=8, data_dim=10):
        super().__init__()
        self.latent_dim = latent_dim
        self.generator = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, data_dim))
        self.discriminator = nn.Sequential(nn.Linear(data_dim, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self._optimizers = self.configure_optimizers()

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=2e-4)
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=2e-4)
        return opt_g, opt_d

    def optimizers(self):
        return self._optimizers

    def manual_backward(self, loss, *args, **kwargs):
        loss.backward(*args, **kwargs)

    def training_step(self, batch, batch_idx):
        opt_g, opt_d = self.optimizers()
        z = torch.randn(batch.size(0), self.latent_dim)
        fake = self.generator(z)
        d_fake = self.discriminator(fake)
        d_loss = F.softplus(d_fake).mean() + F.softplus(-self.discriminator(batch)).mean()
        opt_d.zero_grad()
        self.manual_backward(d_loss, retain_graph=True)
        opt_d.step()

        g_loss = F.softplus(-d_fake).mean()
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()


torch.manual_seed(0)
gan = GAN()
for batch_idx in range(3):
    gan.training_step(torch.randn(16, 10), batch_idx)
