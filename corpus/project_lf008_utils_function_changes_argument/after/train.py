import torch
import torch.nn as nn

import utils

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(8, 5), torch.randint(0, 2, (8, 1)).float()
    p = torch.sigmoid(model(x))
    p = p.clone()
    p = utils.clip_probs(p)
    loss = -(y * torch.log(p) + (1 - y) * torch.log(1 - p)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
