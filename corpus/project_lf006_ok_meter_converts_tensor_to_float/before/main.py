import torch
import torch.nn as nn
from metrics import AverageMeter

torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = AverageMeter()
for step in range(4):
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.update(loss, x.size(0))
print(f"average loss {losses.avg:.4f}")
