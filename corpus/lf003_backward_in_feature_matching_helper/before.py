import torch
from torch import nn


def feature_matching(real_feats, fake_feats, weight=1.0, step=True):
    loss = weight * (real_feats.mean(0) - fake_feats.mean(0)).pow(2).sum()
    if step:
        loss.backward()
    return loss.item()


torch.manual_seed(0)
netG = nn.Linear(5, 5)
features = nn.Linear(5, 4)
optimizerG = torch.optim.Adam(netG.parameters(), lr=1e-3)
for i in range(4):
    optimizerG.zero_grad()
    generated = netG(torch.randn(12, 5))
    fake_feats = features(generated)
    adv = -fake_feats.mean()
    adv.backward()
    real_feats = features(torch.randn(12, 5))
    feature_matching(real_feats, fake_feats, weight=0.5)
    optimizerG.step()
