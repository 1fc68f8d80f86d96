import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
data = [(torch.randn(8, 4), torch.randint(0, 3, (8,))) for _ in range(5)]
model.register_forward_pre_hook(lambda module, inputs: module.zero_grad())
for step, (x, y) in enumerate(data):
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    print(step, round(loss.item(), 4))
