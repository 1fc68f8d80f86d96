import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 1))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
iter_size = 2


def adjust_learning_rate(optimizer, step):
    for group in optimizer.param_groups:
        group["lr"] = 0.05 * (1 - step / 10)


for step in range(3):
    optimizer.zero_grad()
    adjust_learning_rate(optimizer, step)
    for sub_i in range(iter_size):
        x, y = torch.randn(4, 6), torch.randn(4, 1)
        loss = nn.functional.mse_loss(model(x), y) / iter_size
        loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 4))
