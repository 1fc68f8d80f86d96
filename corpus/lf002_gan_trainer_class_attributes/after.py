import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self):
        self.net_g = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
        self.net_d = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.opt_g = torch.optim.Adam(self.net_g.parameters(), lr=1e-3)
        self.opt_d = torch.optim.Adam(self.net_d.parameters(), lr=1e-3)
        self.loss = nn.BCEWithLogitsLoss()

    def train_step(self, real):
        fake = self.net_g(torch.randn(real.size(0), 2))
        d_fake = self.net_d(fake)
        self.opt_d.zero_grad()
        self.opt_g.zero_grad()
        d_loss = self.loss(self.net_d(real), torch.ones(6, 1)) + self.loss(d_fake, torch.zeros(6, 1))
        d_loss.backward(retain_graph=True, inputs=list(self.net_d.parameters()))
        g_loss = self.loss(d_fake, torch.ones(6, 1))
        g_loss.backward(inputs=list(self.net_g.parameters()))
        self.opt_d.step()
        self.opt_g.step()
        return d_loss.item(), g_loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = GANTrainer()
    for step in range(3):
        print(trainer.train_step(torch.randn(6, 4)))
