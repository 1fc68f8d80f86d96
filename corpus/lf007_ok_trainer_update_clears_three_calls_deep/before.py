import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(5)]


class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt

    def backward(self, x, y):
        loss = F.cross_entropy(self.model(x), y)
        loss.backward()
        return loss

    def update(self):
        self.opt.step()
        self._on_step_end()

    def _on_step_end(self):
        self._clear()

    def _clear(self):
        for group in self.opt.param_groups:
            for p in group["params"]:
                p.grad = None


tr = Trainer(model, optimizer)
for step, (x, y) in enumerate(data):
    loss = tr.backward(x, y)
    tr.update()
    print(step, round(loss.item(), 4))
