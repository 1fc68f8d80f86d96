import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
netsD = [nn.Linear(16, 1), nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 1))]
optimizersD = [torch.optim.Adam(netD.parameters(), lr=1e-3) for netD in netsD]
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for epoch in range(2):
    errD_total = 0
    for step in range(4):
        real = torch.randn(4, 16)
        fake = netG(torch.randn(4, 8))
        for i in range(len(netsD)):
            netsD[i].zero_grad()
            errD = bce(netsD[i](real), torch.ones(4, 1)) + bce(
                netsD[i](fake.detach()), torch.zeros(4, 1)
            )
            errD.backward()
            optimizersD[i].step()
            errD_total += errD.detach()
        netG.zero_grad()
        errG = bce(netsD[0](fake), torch.ones(4, 1))
        errG.backward()
        optimizerG.step()
    print("epoch %d Loss_D: %.2f" % (epoch, errD_total / 4))
