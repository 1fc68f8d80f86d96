import torch


class GanTrainer:
    """One adversarial step on the networks the caller builds."""

    def __init__(self, generator, discriminator, lr=2e-4):
        self.generator = generator
        self.discriminator = discriminator
        self.opt_g = torch.optim.Adam(generator.parameters(), lr=lr)
        self.opt_d = torch.optim.Adam(discriminator.parameters(), lr=lr)

    def step(self, real, noise):
        self.opt_g.zero_grad()
        self.opt_d.zero_grad()
        fake = self.generator(noise)
        d_loss = self.discriminator(fake.detach()).mean() - self.discriminator(real).mean()
        d_loss.backward()
        self.opt_d.step()
        g_loss = -self.discriminator(fake).mean()
        g_loss.backward()
        self.opt_g.step()
