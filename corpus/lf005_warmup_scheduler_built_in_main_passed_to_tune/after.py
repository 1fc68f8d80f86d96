import torch
import torch.nn as nn
from torch.optim.lr_scheduler import LambdaLR


def tune(model, batches, optimizer, lr_scheduler, epochs):
    for epoch in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            lr_scheduler.step()
            print(epoch, optimizer.param_groups[0]["lr"], round(loss.item(), 4))


def main():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    warmup = LambdaLR(optimizer, lambda step: min(1.0, step / 2))  # 0, 0.5, 1, 1, ...
    batches = [(torch.randn(2, 3), torch.randn(2, 1)) for _ in range(2)]
    tune(model, batches, optimizer, warmup, epochs=2)


main()
