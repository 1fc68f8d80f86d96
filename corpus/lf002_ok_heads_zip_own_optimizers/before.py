import torch
from torch import nn

torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(6, 12), nn.ReLU())
heads = nn.ModuleList(nn.Linear(12, 2) for _ in range(3))
backbone_opt = torch.optim.SGD(backbone.parameters(), lr=0.1)
head_opts = [torch.optim.SGD(head.parameters(), lr=0.1) for head in heads]
for step in range(4):
    feats = backbone(torch.randn(5, 6))
    task_losses = [head(feats).pow(2).mean() for head in heads]
    backbone_opt.zero_grad()
    for head_opt, task_loss in zip(head_opts, task_losses):
        head_opt.zero_grad()
        task_loss.backward(retain_graph=True)
        head_opt.step()
    backbone_opt.step()
