import torch
import torch.nn as nn


def train_epoch(model, optimizer, batches):
    total = 0
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total = total + loss
    return total


torch.manual_seed(0)
net = nn.Linear(3, 1)
print(train_epoch(net, torch.optim.SGD(net.parameters(), lr=0.1), [(torch.randn(2, 3), torch.randn(2, 1))] * 3))
