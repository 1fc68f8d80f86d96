import torch
import torch.nn as nn


class Pix2PixModel:
    def __init__(self, nc=6):
        self.netG = nn.Sequential(nn.Linear(nc, 32), nn.ReLU(), nn.Linear(32, nc), nn.Tanh())
        self.netD = nn.Sequential(nn.Linear(2 * nc, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
        self.criterionGAN = nn.BCEWithLogitsLoss()
        self.optimizer_G = torch.optim.Adam(self.netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=2e-4, betas=(0.5, 0.999))

    def set_input(self, real_A, real_B):
        self.real_A, self.real_B = real_A, real_B

    def forward(self):
        self.fake_B = self.netG(self.real_A)

    def backward_D(self):
        pred_fake = self.netD(torch.cat((self.real_A, self.fake_B), 1))
        pred_real = self.netD(torch.cat((self.real_A, self.real_B), 1))
        self.loss_D = 0.5 * (self.criterionGAN(pred_fake, torch.zeros_like(pred_fake))
                             + self.criterionGAN(pred_real, torch.ones_like(pred_real)))
        self.loss_D.backward(retain_graph=True)

    def backward_G(self):
        pred_fake = self.netD(torch.cat((self.real_A, self.fake_B), 1))
        self.loss_G = self.criterionGAN(pred_fake, torch.ones_like(pred_fake))
        self.loss_G = self.loss_G + 100.0 * nn.functional.l1_loss(self.fake_B, self.real_B)
        self.loss_G.backward()

    def optimize_parameters(self):
        self.forward()
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()


torch.manual_seed(0)
model = Pix2PixModel()
for i in range(3):
    model.set_input(torch.randn(8, 6), torch.randn(8, 6))
    model.optimize_parameters()
