# Deep mutual learning (Zhang et al., 2018): each peer learns from the labels and the others.
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.fc2 = nn.Linear(32, 5)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


torch.manual_seed(0)
n = 2
models = [Net() for _ in range(n)]
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
                loss = loss + kl(F.log_softmax(outputs[k], dim=1), F.softmax(outputs[j].detach(), dim=1)) / (n - 1)
        optimizers[k].zero_grad()
        loss.backward()
        optimizers[k].step()
    print(it, loss.item())
