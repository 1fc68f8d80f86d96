import torch
import torch.nn as nn
import torch.optim as optim


class DRGAN:
    def initialize(self):
        self.G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        self.D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        self.optimizer_G = optim.Adam(self.G.parameters(), lr=1e-3)
        self.optimizer_D = optim.Adam(self.D.parameters(), lr=1e-3)
        self.criterion = nn.CrossEntropyLoss()

    def forward(self, image, identity):
        self.image, self.identity = image, identity
        self.fake_identity = torch.zeros_like(identity)
        self.syn_image = self.G(image)
        self.syn = self.D(self.syn_image)
        self.real = self.D(image)

    def backward_G(self):
        self.loss_G = self.criterion(self.syn, self.identity)
        self.loss_G = self.loss_G + (self.syn_image - self.image).abs().mean()
        self.loss_G.backward(retain_graph=True)

    def backward_D(self):
        self.loss_D = self.criterion(self.real, self.identity)
        self.loss_D = self.loss_D + self.criterion(self.syn, self.fake_identity)
        self.loss_D.backward()

    def optimize_G_parameters(self):
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()

    def optimize_D_parameters(self):
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()
