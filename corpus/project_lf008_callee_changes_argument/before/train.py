import torch
import torch.nn as nn

from layers import AddBias


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.add_bias = AddBias(8)
        self.out = nn.Linear(8, 2)

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        h = self.add_bias(h)
        return self.out(h)


torch.manual_seed(0)
net = Net()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(4, 8), torch.randint(0, 2, (4,))
    loss = nn.functional.cross_entropy(net(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
