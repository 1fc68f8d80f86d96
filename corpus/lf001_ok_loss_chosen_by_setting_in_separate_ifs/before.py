import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--loss_D", type=int, default=5, choices=range(1, 7))
parser.add_argument("--cuda", action="store_true")
param = parser.parse_args()

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
BCE_stable = nn.BCEWithLogitsLoss()
optimizerD = torch.optim.Adam(D.parameters(), lr=1e-3)
optimizerG = torch.optim.Adam(G.parameters(), lr=1e-3)
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)

for i in range(3):
    # (1) the discriminator: a standard loss in two backwards, or a relativistic one in one
    D.zero_grad()
    x = torch.randn(8, 4)
    if param.cuda:
        x = x.cuda()
    y_pred = D(x)
    z = torch.randn(8, 4)
    if param.cuda:
        z = z.cuda()
    fake = G(z)
    y_pred_fake = D(fake.detach())
    if param.loss_D in [1, 2, 3]:
        if param.loss_D == 1:
            errD_real = BCE_stable(y_pred, ones)
        if param.loss_D == 2:
            errD_real = torch.mean((y_pred - ones) ** 2)
        if param.loss_D == 3:
            errD_real = -torch.mean(y_pred)
        errD_real.backward()
        if param.loss_D == 1:
            errD_fake = BCE_stable(y_pred_fake, zeros)
        if param.loss_D == 2:
            errD_fake = torch.mean(y_pred_fake ** 2)
        if param.loss_D == 3:
            errD_fake = torch.mean(y_pred_fake)
        errD_fake.backward()
        errD = errD_real + errD_fake
    else:
        if param.loss_D == 4:
            errD = BCE_stable(y_pred - y_pred_fake, ones)
        if param.loss_D == 5:
            errD = (
                BCE_stable(y_pred - torch.mean(y_pred_fake), ones)
                + BCE_stable(y_pred_fake - torch.mean(y_pred), zeros)
            ) / 2
        if param.loss_D == 6:
            errD = torch.mean(torch.relu(1.0 - (y_pred - torch.mean(y_pred_fake))))
        errD.backward()
    optimizerD.step()

    # (2) the generator: one loss per setting, each bound in its own `if`
    G.zero_grad()
    y_pred_fake = D(G(torch.randn(8, 4)))
    if param.loss_D == 1:
        errG = BCE_stable(y_pred_fake, ones)
    if param.loss_D == 2:
        errG = torch.mean((y_pred_fake - ones) ** 2)
    if param.loss_D == 3:
        errG = -torch.mean(y_pred_fake)
    if param.loss_D == 4:
        errG = BCE_stable(y_pred_fake - D(x), ones)
    if param.loss_D == 5:
        y_pred = D(x)
        errG = (
            BCE_stable(y_pred - torch.mean(y_pred_fake), zeros)
            + BCE_stable(y_pred_fake - torch.mean(y_pred), ones)
        ) / 2
    if param.loss_D == 6:
        errG = torch.mean(torch.relu(1.0 + (D(x) - torch.mean(y_pred_fake))))
    errG.backward()
    optimizerG.step()
    print(i, errD.item(), errG.item())
