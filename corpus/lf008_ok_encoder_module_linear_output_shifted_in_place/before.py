import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    """A tanh feature layer, then a linear projection to the code."""

    def __init__(self, features=6, code=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, 32), nn.Tanh(), nn.Linear(32, code))

    def forward(self, x):
        return self.net(x)


torch.manual_seed(0)
encoder = Encoder()
head = nn.Linear(16, 6)
optimizer = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-3)
for step in range(3):
    x = torch.randn(8, 6)
    code = encoder(x)
    code += 0.1 * torch.randn_like(code)
    code = F.dropout(code, 0.1, training=True, inplace=True)
    loss = F.mse_loss(head(code), x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
