import torch
import torch.nn as nn
import torch.nn.functional as F


def make_net():
    return nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 5))


torch.manual_seed(0)
n_students = 3
models = [make_net().train() for _ in range(n_students)]
optimizers = [torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for m in models]

for step in range(3):
    x, y = torch.randn(16, 10), torch.randint(0, 5, (16,))
    outputs = [m(x) for m in models]
    for i in range(n_students):
        ce = F.cross_entropy(outputs[i], y)
        kl = sum(F.kl_div(F.log_softmax(outputs[i], 1), F.softmax(outputs[j].detach(), 1), reduction="batchmean")
                 for j in range(n_students) if j != i) / (n_students - 1)
        loss = ce + kl
        optimizers[i].zero_grad()
        loss.backward()
        optimizers[i].step()
