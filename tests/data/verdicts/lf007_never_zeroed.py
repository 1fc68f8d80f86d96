import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(3)]
for x, y in batches:
    loss = (model(x) - y).pow(2).mean()
    loss.backward()
    optimizer.step()
