import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--gan-type", default="vanilla", choices=["vanilla", "lsgan", "re_avg_gan"])
options = parser.parse_args([])
torch.manual_seed(0)


class InpaintingModel:
    """Shift-Net's shape: the discriminator keeps its graph only for the relativistic average
    loss, whose generator loss reads the discriminator's earlier output; the other losses
    never read it, so their discriminator backward frees it."""

    def __init__(self, gan_type):
        self.gan_type = gan_type
        self.net_g = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
        self.net_d = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.optimizer_g = torch.optim.Adam(self.net_g.parameters(), lr=1e-3)
        self.optimizer_d = torch.optim.Adam(self.net_d.parameters(), lr=1e-3)
        self.bce = nn.BCEWithLogitsLoss()
        self.mse = nn.MSELoss()

    def backward_d(self):
        self.pred_fake = self.net_d(self.fake.detach())
        pred_real = self.net_d(self.real)
        if self.gan_type == "lsgan":
            self.loss_d = self.mse(pred_real, torch.ones_like(pred_real)) + self.mse(
                self.pred_fake, torch.zeros_like(self.pred_fake)
            )
        else:
            self.loss_d = self.bce(pred_real - self.pred_fake.mean(), torch.ones_like(pred_real))
        if self.gan_type == "re_avg_gan":
            self.loss_d.backward(retain_graph=True)
        else:
            self.loss_d.backward()

    def backward_g(self):
        pred_fake = self.net_d(self.fake)
        if self.gan_type == "lsgan":
            self.loss_g = self.mse(pred_fake, torch.ones_like(pred_fake))
        elif self.gan_type == "vanilla":
            self.loss_g = self.bce(pred_fake, torch.ones_like(pred_fake))
        elif self.gan_type == "re_avg_gan":
            self.loss_g = self.bce(pred_fake - self.pred_fake.mean(), torch.ones_like(pred_fake))
        self.loss_g.backward()

    def optimize_parameters(self, real, noise):
        self.real, self.fake = real, self.net_g(noise)
        self.optimizer_d.zero_grad()
        self.optimizer_g.zero_grad()
        self.backward_d()
        self.backward_g()
        self.optimizer_d.step()
        self.optimizer_g.step()


model = InpaintingModel(options.gan_type)
for step in range(3):
    model.optimize_parameters(torch.randn(6, 4), torch.randn(6, 4))
    print(f"step {step}: D {model.loss_d.item():.4f} G {model.loss_g.item():.4f}")
