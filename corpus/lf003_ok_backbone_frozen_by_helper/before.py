import torch
from torch import nn


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False
    return module.eval()


torch.manual_seed(0)
backbone = freeze(nn.Sequential(nn.Linear(5, 12), nn.ReLU()))
head_a, head_b = nn.Linear(12, 1), nn.Linear(12, 3)
opt_a = torch.optim.Adam(head_a.parameters())
opt_b = torch.optim.Adam(head_b.parameters())
for step in range(4):
    feats = backbone(torch.randn(6, 5))
    opt_a.zero_grad()
    head_a(feats).pow(2).mean().backward()
    opt_a.step()
    opt_b.zero_grad()
    nn.functional.cross_entropy(head_b(feats), torch.randint(0, 3, (6,))).backward()
    opt_b.step()
