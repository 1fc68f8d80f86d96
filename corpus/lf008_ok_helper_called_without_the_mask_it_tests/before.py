import torch
import torch.nn as nn
import torch.nn.functional as F


def mask_probs(probs, mask=None):
    """Zero the probabilities of the masked positions (pointer networks' padding)."""
    if mask is not None:
        probs[mask] = 0.0
    return probs


class Pointer(nn.Module):
    def __init__(self, d=6, n=5):
        super().__init__()
        self.fc = nn.Linear(d, n)
        self.val = nn.Linear(n, 1)

    def forward(self, x, mask=None):
        probs = torch.softmax(self.fc(x), dim=-1)
        probs = mask_probs(probs)
        return self.val(probs)


torch.manual_seed(0)
model = Pointer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x, y = torch.randn(4, 6), torch.randn(4, 1)
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
