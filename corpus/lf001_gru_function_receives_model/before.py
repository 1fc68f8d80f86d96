import torch
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, features=3, hidden=10):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)
        self.proj = nn.Linear(hidden, features)

    def forward(self, window, state):
        seq, state = self.gru(window, state)
        return self.proj(seq), state


def fit(net, opt, windows, loss_fn):
    state = torch.zeros(1, 4, 10)
    for window, target in windows:
        pred, state = net(window, state)
        loss = loss_fn(pred, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.item()


torch.manual_seed(0)
model = Forecaster()
series = [(torch.randn(4, 6, 3), torch.randn(4, 6, 3)) for _ in range(3)]
fit(model, torch.optim.SGD(model.parameters(), lr=0.05), series, nn.MSELoss())
