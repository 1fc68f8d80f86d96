import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(5, 10), nn.Tanh(), nn.Linear(10, 1))
optimizer = torch.optim.SGD(net.parameters(), lr=0.01)
for epoch in range(5):
    x = torch.randn(16, 5)
    loss = (net(x) - x.sum(dim=1, keepdim=True)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
