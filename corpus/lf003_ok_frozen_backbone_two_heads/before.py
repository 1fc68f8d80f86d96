import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(10, 16), nn.ReLU(), nn.Linear(16, 16))
for p in backbone.parameters():
    p.requires_grad = False  # a pretrained feature extractor, kept frozen
cls_head, reg_head = nn.Linear(16, 3), nn.Linear(16, 1)
opt_cls = torch.optim.SGD(cls_head.parameters(), lr=0.1)
opt_reg = torch.optim.SGD(reg_head.parameters(), lr=0.1)
for step in range(4):
    x, label, value = torch.randn(6, 10), torch.randint(0, 3, (6,)), torch.randn(6, 1)
    feats = backbone(x)
    opt_cls.zero_grad()
    nn.functional.cross_entropy(cls_head(feats), label).backward()
    opt_cls.step()
    opt_reg.zero_grad()
    nn.functional.mse_loss(reg_head(feats), value).backward()
    opt_reg.step()
