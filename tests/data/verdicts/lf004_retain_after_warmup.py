import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
WARMUP = 0
for step in range(6):
    loss = model(torch.randn(8, 4)).pow(2).mean()
    optimizer.zero_grad()
    if step >= WARMUP:
        loss.backward(retain_graph=True)
    else:
        loss.backward()
    optimizer.step()
