import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(5)]


class ZeroGrad:
    def __init__(self, opt):
        self.opt = opt

    def on_batch_begin(self):
        self.opt.zero_grad()


class Printer:
    def on_batch_begin(self):
        pass


callbacks = [Printer(), ZeroGrad(optimizer)]
for step, (x, y) in enumerate(data):
    for cb in callbacks:
        cb.on_batch_begin()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 4))
