import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
total_steps = 12
scheduler = torch.optim.lr_scheduler.LambdaLR(
    optimizer, lr_lambda=lambda step: 0.5 * (1 + math.cos(step / total_steps * math.pi))
)

loss_avg = 0.0
for step in range(total_steps):
    data, target = torch.randn(6, 8), torch.randint(0, 4, (6,))

    # forward
    x = net(data)

    # backward
    optimizer.zero_grad()
    loss = F.cross_entropy(x, target)
    loss.backward()
    optimizer.step()
    scheduler.step()

    # exponential moving average
    loss_avg = loss_avg * 0.8 + float(loss) * 0.2
print(loss_avg)
