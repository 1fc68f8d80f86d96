import torch
import torch.nn as nn


class DeepSupervisedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Linear(16, 32), nn.ReLU())
        self.stage2 = nn.Sequential(nn.Linear(32, 32), nn.ReLU())
        self.stage3 = nn.Sequential(nn.Linear(32, 32), nn.ReLU())
        self.aux1, self.aux2, self.final = nn.Linear(32, 3), nn.Linear(32, 3), nn.Linear(32, 3)

    def forward(self, x):
        h1 = self.stage1(x)
        h2 = self.stage2(h1)
        h3 = self.stage3(h2)
        return self.aux1(h1), self.aux2(h2), self.final(h3)


torch.manual_seed(0)
net = DeepSupervisedNet()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
criterion = nn.CrossEntropyLoss()

for it in range(4):
    x, y = torch.randn(8, 16), torch.randint(0, 3, (8,))
    aux1, aux2, out = net(x)
    optimizer.zero_grad()
    criterion(out, y).backward(retain_graph=True)
    (0.4 * criterion(aux2, y)).backward(retain_graph=True)
    (0.2 * criterion(aux1, y)).backward()
    optimizer.step()
