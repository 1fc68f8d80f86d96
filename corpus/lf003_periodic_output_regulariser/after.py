# A classifier with an output regulariser applied every few iterations after the main step.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
reg_every = 2
reg_weight = 1e-2

for i in range(5):
    x = torch.randn(32, 10)
    y = torch.randint(0, 5, (32,))
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    opt.zero_grad()
    loss.backward()
    opt.step()

    if i % reg_every == 0:
        logits = model(x)
        reg = reg_weight * logits.pow(2).mean()
        opt.zero_grad()
        reg.backward()
        opt.step()
    print(i, loss.item())
