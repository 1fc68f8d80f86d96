# Meters for the loss and the accuracy: the loss meter is given loss.item(), the accuracy meter
# a batch accuracy computed from argmax, which carries no graph.
import torch
import torch.nn as nn


class Meter:
    def __init__(self):
        self.total = 0.0
        self.weight = 0

    def update(self, value, n=1):
        self.total += value * n
        self.weight += n

    @property
    def mean(self):
        return self.total / max(self.weight, 1)


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(9, 18), nn.ReLU(), nn.Linear(18, 3))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
batches = [(torch.randn(8, 9), torch.randint(0, 3, (8,))) for _ in range(4)]
loss_meter, accuracy_meter = Meter(), Meter()

for epoch in range(2):
    for features, labels in batches:
        logits = net(features)
        loss = nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        accuracy = (logits.argmax(dim=1) == labels).float().mean()
        accuracy_meter.update(accuracy, labels.size(0))
        loss_meter.update(loss.item(), labels.size(0))
    print(f"epoch {epoch}: loss {loss_meter.mean:.4f} accuracy {float(accuracy_meter.mean):.3f}")
