import torch
import torch.nn as nn


class GatedResidual(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.gate = nn.Linear(width, width)
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        out = torch.sigmoid(self.gate(x))
        out = out * x  # gate the input
        return self.head(out)


torch.manual_seed(0)
model = GatedResidual(6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
data = [(torch.randn(5, 6), torch.randn(5, 1)) for _ in range(4)]
for x, y in data:
    loss = nn.functional.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f}")
