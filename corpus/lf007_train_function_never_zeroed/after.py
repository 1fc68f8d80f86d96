import torch
import torch.nn as nn


def train(model, optimizer, batches):
    for images, labels in batches:
        logits = model(images)
        loss = nn.functional.cross_entropy(logits, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    net = nn.Sequential(nn.Flatten(), nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 3))
    data = [(torch.randn(4, 3, 2, 2), torch.randint(0, 3, (4,))) for _ in range(4)]
    train(net, torch.optim.SGD(net.parameters(), lr=0.1), data)
