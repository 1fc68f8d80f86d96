import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(8, 6), nn.ReLU(), nn.Linear(6, 4))
discriminator = nn.Sequential(nn.Linear(4, 1), nn.Sigmoid())
optim_g = torch.optim.Adamax(filter(lambda p: p.requires_grad, generator.parameters()), lr=1e-3)
optim_d = torch.optim.Adamax(
    filter(lambda p: p.requires_grad, discriminator.parameters()), lr=1e-3
)
bce = nn.BCELoss()
for step in range(3):
    v = torch.randn(5, 8)
    optim_g.zero_grad()
    optim_d.zero_grad()
    preds = discriminator(generator(v))
    g_loss = bce(preds, torch.ones(5, 1))
    g_loss.backward(retain_graph=True)
    optim_g.step()
    d_loss = bce(preds, torch.zeros(5, 1))
    d_loss.backward()
    optim_d.step()
    print(step, round(g_loss.item(), 4), round(d_loss.item(), 4))
