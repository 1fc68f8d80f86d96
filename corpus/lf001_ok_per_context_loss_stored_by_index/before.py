import torch
import torch.nn as nn
import torch.nn.functional as F


def train_batch(model, optimizer, contexts):
    optimizer.zero_grad()
    count = len(contexts)
    losses = [None] * count
    for c in range(count):
        x, y = contexts[c]
        losses[c] = F.cross_entropy(model(x), y)
        (losses[c] / count).backward()
    optimizer.step()
    return sum(loss.item() for loss in losses) / count


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
contexts = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
for epoch in range(3):
    print(train_batch(model, optimizer, contexts))
