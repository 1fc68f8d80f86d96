import torch
import torch.nn as nn


def train(model, batches, optimizer, scheduler, epochs):
    for epoch in range(epochs):
        for x, y in batches:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
        scheduler.step()
        print(epoch, optimizer.param_groups[0]["lr"])


def main():
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
    train(model, batches, optimizer, scheduler, epochs=3)


main()
