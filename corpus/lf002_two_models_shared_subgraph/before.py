import torch
import torch.nn as nn

torch.manual_seed(0)
model1 = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
model2 = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
opt1 = torch.optim.SGD(model1.parameters(), lr=0.1)
opt2 = torch.optim.SGD(model2.parameters(), lr=0.1)

for step in range(3):
    x = torch.randn(16, 4)
    o1, o2 = model1(x), model2(x)
    shared = (o1 * o2).mean()
    loss1 = shared + o1.pow(2).mean()
    loss2 = shared + o2.pow(2).mean()
    opt2.zero_grad()
    loss2.backward(retain_graph=True)
    opt2.step()
    opt1.zero_grad()
    loss1.backward()
    opt1.step()
