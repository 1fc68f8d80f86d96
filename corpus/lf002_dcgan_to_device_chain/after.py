import torch
import torch.nn as nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
device = torch.device("cpu")
nz, nfeat = 8, 12


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nz, 32), nn.ReLU(True), nn.Linear(32, nfeat), nn.Tanh())

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Linear(nfeat, 32), nn.LeakyReLU(0.2, True), nn.Linear(32, 1))

    def forward(self, x):
        return self.main(x).view(-1)


torch.manual_seed(0)
netG = Generator().to(device).train()
netD = Discriminator().to(device).float().train()
criterion = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))

for i in range(3):
    real = torch.randn(16, nfeat, device=device)
    noise = torch.randn(16, nz, device=device)
    netD.zero_grad()

    netG.zero_grad()
    errD_real = criterion(netD(real), torch.ones(16, device=device))
    fake = netG(noise)
    output = netD(fake)
    errD_fake = criterion(output, torch.zeros(16, device=device))
    errD = errD_real + errD_fake
    errD.backward(retain_graph=True, inputs=list(netD.parameters()))
    errG = criterion(output, torch.ones(16, device=device))
    errG.backward(inputs=list(netG.parameters()))
    optimizerD.step()
    optimizerG.step()
