import torch
import torch.nn as nn


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))

    def forward(self, x):
        return x * self.scale


torch.manual_seed(0)
encoder = Scale()
head_a, head_b = nn.Linear(4, 1), nn.Linear(4, 1)
params = list(encoder.parameters()) + list(head_a.parameters()) + list(head_b.parameters())
optimizer = torch.optim.SGD(params, lr=0.1)
for _ in range(3):
    h = encoder(torch.randn(8, 4))
    loss_a = head_a(h).pow(2).mean()
    loss_b = head_b(h).pow(2).mean()
    optimizer.zero_grad()
    loss_a.backward()
    loss_b.backward()
    optimizer.step()
