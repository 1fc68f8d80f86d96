import torch
import torch.nn as nn

from statetools import repackage


class LM(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 8, batch_first=True)
        self.out = nn.Linear(8, 4)

    def forward(self, x, hidden=None):
        y, hidden = self.rnn(x, hidden)
        return self.out(y), hidden


torch.manual_seed(0)
model = LM()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
stream = torch.randn(2, 40, 4)
hidden = None
for i in range(0, 35, 5):
    x, y = stream[:, i:i + 5], stream[:, i + 1:i + 6]
    hidden = repackage(hidden)
    out, hidden = model(x, hidden)
    loss = (out - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(i, round(loss.item(), 4))
