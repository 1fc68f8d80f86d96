import torch
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(12, 16)
        self.fc2 = nn.Linear(16, 3)
        self.act = nn.LeakyReLU(0.2, inplace=False)

    def forward(self, x):
        h = torch.tanh(self.fc1(x))
        h = self.act(h)
        return self.fc2(h)


torch.manual_seed(0)
encoder = Encoder()
optimizer = torch.optim.SGD(encoder.parameters(), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
for step in range(4):
    x, y = torch.randn(8, 12), torch.randint(0, 3, (8,))
    optimizer.zero_grad()
    criterion(encoder(x), y).backward()
    optimizer.step()
