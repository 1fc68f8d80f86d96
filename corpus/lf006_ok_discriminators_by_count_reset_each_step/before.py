import torch
import torch.nn as nn


class MultiscaleTrainer:
    """pix2pixHD's shape: `num_D` discriminators, walked by their count."""

    def __init__(self, num_D=3):
        torch.manual_seed(0)
        self.num_D = num_D
        self.netG = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.netD = nn.ModuleList([nn.Linear(8 // 2**i, 1) for i in range(num_D)])
        self.optD = [torch.optim.Adam(d.parameters(), lr=1e-3) for d in self.netD]

    def downsample(self, x, i):
        return nn.functional.avg_pool1d(x.unsqueeze(1), 2**i).squeeze(1) if i else x

    def train(self, steps):
        for step in range(steps):
            fake = self.netG(torch.randn(8, 4)).detach()
            loss_D = 0
            for i in range(self.num_D):
                self.optD[i].zero_grad()
                loss = self.netD[i](self.downsample(fake, i)).pow(2).mean()
                loss.backward()
                self.optD[i].step()
                loss_D += loss
            print(f"step {step}: D {loss_D.item():.4f}")


MultiscaleTrainer().train(4)
