import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)


def train_step(weak, strong):
    """FixMatch-style pseudo-labels: the weak view's probabilities are detached and masked in
    place; no loss goes through that softmax, so its kept output is never read."""
    probs = torch.softmax(model(weak), dim=1).detach()
    confidence, labels = probs.max(dim=1)
    probs[confidence < 0.3] = 0.0
    mask = probs.sum(dim=1) > 0
    loss = (F.cross_entropy(model(strong), labels, reduction="none") * mask).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


for _ in range(3):
    batch = torch.randn(8, 10)
    print(train_step(batch, batch + 0.1 * torch.randn(8, 10)))
