import torch
import torch.nn as nn

import engine


def build():
    return nn.Sequential(nn.Linear(6, 20), nn.Tanh(), nn.Linear(20, 4))


if __name__ == "__main__":
    torch.manual_seed(3)
    net = build()
    opt = torch.optim.SGD(net.parameters(), lr=0.05)
    batches = [(torch.randn(10, 6), torch.randint(0, 4, (10,))) for _ in range(5)]
    for epoch in range(3):
        mean_loss = engine.fit_epoch(net, batches, opt, nn.CrossEntropyLoss())
        print(epoch, round(mean_loss, 4), engine.accuracy(net, batches))
