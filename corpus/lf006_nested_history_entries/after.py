from collections import defaultdict

import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(5)]
history = {"train": defaultdict(list)}
for epoch in range(2):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        history["train"]["loss"].append(loss.detach())
    print("mean", sum(history["train"]["loss"]) / len(history["train"]["loss"]))
