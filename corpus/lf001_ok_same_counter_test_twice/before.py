import torch
import torch.nn as nn

torch.manual_seed(0)
backbone = nn.Linear(4, 4)
head = nn.Linear(4, 1)
optimizer = torch.optim.SGD([*backbone.parameters(), *head.parameters()], lr=0.1)
for it in range(6):
    x = torch.randn(2, 4)
    loss = head(x).pow(2).mean()
    if it % 2 == 0:  # every other iteration, an extra feature term
        features = backbone(x)
    if it % 2 == 0:
        loss = loss + features.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
