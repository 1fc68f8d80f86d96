import torch
import torch.nn.functional as F


class Solver:
    """One adversarial update per call, on the networks the caller builds."""

    def __init__(self, generator, discriminator, lr=1e-3):
        self.G, self.D = generator, discriminator
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), lr)
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), lr)

    def reset_grad(self):
        """Clear both networks' gradients."""
        self.g_optimizer.zero_grad()
        self.d_optimizer.zero_grad()

    def train_step(self, real):
        self.reset_grad()
        fake = self.G(torch.randn(real.size(0), 4))
        d_loss = F.softplus(-self.D(real)).mean() + F.softplus(self.D(fake)).mean()
        d_loss.backward()
        self.d_optimizer.step()
        g_loss = F.softplus(-self.D(self.G(torch.randn(real.size(0), 4)))).mean()
        g_loss.backward()
        self.g_optimizer.step()
        return d_loss.item(), g_loss.item()
