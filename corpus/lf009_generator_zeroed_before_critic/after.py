import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(3, 12), nn.ReLU(), nn.Linear(12, 6))
netD = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizerG = torch.optim.RMSprop(netG.parameters(), lr=5e-4)
optimizerD = torch.optim.RMSprop(netD.parameters(), lr=5e-4)


def train(epochs=2, batches=2):
    for epoch in range(epochs):
        for _ in range(batches):
            real = torch.randn(4, 6)
            optimizerG.zero_grad()
            fake = netG(torch.randn(4, 3))
            optimizerD.zero_grad()
            errD = netD(fake).mean() - netD(real).mean()
            errD.backward(retain_graph=True, inputs=[p for group in optimizerD.param_groups for p in group["params"]])
            optimizerD.step()
            errG = -netD(fake).mean()
            errG.backward()
            optimizerG.step()


train()
