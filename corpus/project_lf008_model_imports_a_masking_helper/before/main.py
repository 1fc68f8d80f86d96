import torch
import torch.nn.functional as F

from model import Pointer

torch.manual_seed(0)
model = Pointer()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(4):
    x, y = torch.randn(4, 6), torch.randn(4, 1)
    mask = torch.rand(4, 5) > 0.7
    loss = F.mse_loss(model(x, mask), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
