import torch
import torch.nn as nn


class StatefulGRU(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 5, batch_first=True)
        self.state = None

    def forward(self, x):
        y, self.state = self.gru(x, self.state)
        return y


torch.manual_seed(0)
model = StatefulGRU()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    x = torch.randn(2, 6, 3)
    loss = model(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    model.state = None
