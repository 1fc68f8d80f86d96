# Deep mutual learning: every peer learns from the labels and from the other peers' predictions.
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n = 3
models = [nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5)) for _ in range(n)]
optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in models]
ce = nn.CrossEntropyLoss()
kl = nn.KLDivLoss(reduction="batchmean")

for it in range(4):
    x = torch.randn(32, 10)
    y = torch.randint(0, 5, (32,))
    outputs = [m(x) for m in models]
    for k in range(n):
        loss = ce(outputs[k], y)
        for j in range(n):
            if j != k:
                target = F.softmax(outputs[j].detach(), dim=1)
                loss = loss + kl(F.log_softmax(outputs[k], dim=1), target) / (n - 1)
        optimizers[k].zero_grad()
        loss.backward()
        optimizers[k].step()
    print(it, loss.item())
