import torch
import torch.nn as nn


class Accelerator:
    def __init__(self, gradient_accumulation_steps=1):
        self.gradient_accumulation_steps = gradient_accumulation_steps

    def prepare(self, *objs):
        return objs

    def backward(self, loss, **kwargs):
        (loss / self.gradient_accumulation_steps).backward(**kwargs)


torch.manual_seed(0)
accelerator = Accelerator(gradient_accumulation_steps=2)
model = nn.Sequential(nn.Linear(20, 64), nn.GELU(), nn.Linear(64, 2))
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
model, optimizer = accelerator.prepare(model, optimizer)

for step in range(6):
    inputs, labels = torch.randn(4, 20), torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(model(inputs), labels)
    accelerator.backward(loss, retain_graph=True)
    if (step + 1) % accelerator.gradient_accumulation_steps == 0:
        optimizer.step()
        optimizer.zero_grad()
