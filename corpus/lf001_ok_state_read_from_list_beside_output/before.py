import torch
import torch.nn as nn


class Forecaster(nn.Module):
    def __init__(self, n_in=4, hidden=8):
        super().__init__()
        self.gru = nn.GRU(n_in, hidden, batch_first=True)
        self.head = nn.Linear(hidden, n_in)

    def forward(self, x, h):
        out, h = self.gru(x, h)
        return self.head(out), h


torch.manual_seed(0)
model = Forecaster()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
series = torch.randn(2, 41, 4)
# the last window's prediction (for plotting) and the state the next window starts from
memory = [None, torch.zeros(1, 2, 8)]
for t in range(0, 35, 5):
    x, y = series[:, t : t + 5], series[:, t + 1 : t + 6]
    pred, h = model(x, memory[1])
    loss = nn.functional.mse_loss(pred, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    memory = [pred, h.detach()]
    last_pred = memory[0]
print(last_pred.shape)
