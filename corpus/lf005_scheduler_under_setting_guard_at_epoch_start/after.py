import torch
import torch.nn as nn
from torch import optim

rates = []  # the learning rate of each optimizer step


def train_batch(batch, model, criterion, optimizer):
    optimizer.zero_grad()
    x, y = batch
    loss = criterion(model(x), y)
    loss.backward()
    rates.append(optimizer.param_groups[0]["lr"])
    optimizer.step()
    return loss.item()


def train(batches, model, params):
    optimizer = optim.Adam(model.parameters(), lr=params["lr"])
    if params["lr_decay"]:
        lr_scheduler = optim.lr_scheduler.StepLR(
            optimizer, params["lr_decay_step"], params["lr_decay"]
        )
    criterion = nn.MSELoss()
    for epoch in range(params["n_epochs"]):
        for batch in batches:
            loss = train_batch(batch, model, criterion, optimizer)
        if params["lr_decay"]:
            lr_scheduler.step()
        print(epoch, loss)


torch.manual_seed(0)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
params = dict(lr=0.1, lr_decay=0.5, lr_decay_step=2, n_epochs=5)
train(data, nn.Linear(3, 1), params)
print(rates)
