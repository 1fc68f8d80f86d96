import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--no-aux", dest="aux", action="store_false")
args = parser.parse_args()

torch.manual_seed(0)
backbone, head, aux_head = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 1)
params = [*backbone.parameters(), *head.parameters(), *aux_head.parameters()]
optimizer = torch.optim.SGD(params, lr=0.1)
for step in range(4):
    x = torch.randn(2, 4)
    feat = backbone(x)
    if args.aux:
        aux_out = aux_head(feat)
    loss = head(feat).pow(2).mean()
    if args.aux:
        loss = loss + aux_out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
