import torch
import torch.nn as nn

from fancy.act import bias_act_


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.bias = nn.Parameter(torch.zeros(6))
        self.out = nn.Linear(6, 2)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return self.out(bias_act_(self.bias, h))


torch.manual_seed(0)
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    loss = nn.functional.cross_entropy(net(torch.randn(4, 6)), torch.randint(0, 2, (4,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
