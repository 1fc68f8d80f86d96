import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Linear(4, 8)
heads = nn.ModuleList([nn.Linear(8, 1) for _ in range(3)])
optimizer = torch.optim.SGD([*encoder.parameters(), *heads.parameters()], lr=0.1)
for step in range(2):
    feat = torch.relu(encoder(torch.randn(5, 4)))
    outs = []
    for head in heads:
        outs.append(head(feat))
    optimizer.zero_grad()
    for out in outs:
        out.pow(2).mean().backward()
    optimizer.step()
