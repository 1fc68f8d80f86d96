import torch
import torch.nn as nn


class cfg:  # AttnGAN's settings object
    B_DCGAN = False
    NET_E = "text_encoder.pth"


class Trainer:
    def __init__(self, num_batches):
        self.num_batches = num_batches

    def build_models(self):
        if cfg.NET_E == "":
            print("Error: no pretrained text-image encoders")
            return
        netsD = []
        if cfg.B_DCGAN:
            netG = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
            netsD = [nn.Sequential(nn.Linear(16, 1))]
        else:
            netG = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh())
            netsD.append(nn.Sequential(nn.Linear(16, 1)))
            netsD.append(nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1)))
        return [netG, netsD]

    def define_optimizers(self, netG, netsD):
        optimizersD = []
        for netD in netsD:
            optimizersD.append(torch.optim.Adam(netD.parameters(), lr=1e-3))
        optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3)
        return optimizerG, optimizersD

    def train(self):
        torch.manual_seed(0)
        netG, netsD = self.build_models()
        optimizerG, optimizersD = self.define_optimizers(netG, netsD)
        bce = nn.BCEWithLogitsLoss()
        for epoch in range(2):
            step = 0
            while step < self.num_batches:
                real = torch.randn(4, 16)
                fake = netG(torch.randn(4, 8))
                errD_total = 0
                for i in range(len(netsD)):
                    netsD[i].zero_grad()
                    errD = bce(netsD[i](real), torch.ones(4, 1)) + bce(
                        netsD[i](fake.detach()), torch.zeros(4, 1)
                    )
                    errD.backward()
                    optimizersD[i].step()
                    errD_total += errD
                netG.zero_grad()
                errG_total = 0
                for i in range(len(netsD)):
                    errG_total = errG_total + bce(netsD[i](fake), torch.ones(4, 1))
                errG_total.backward()
                optimizerG.step()
                step += 1
            print("Loss_D: %.2f Loss_G: %.2f" % (errD_total.item(), errG_total.item()))


Trainer(num_batches=4).train()
