import torch
import torch.nn as nn


class GatedRegressor(nn.Module):
    """Sigmoid gates computed by one block, regularised by the next block's dropout."""

    def __init__(self, inputs=20, hidden=32):
        super().__init__()
        self.gate = nn.Sequential(nn.Linear(inputs, hidden), nn.Sigmoid())
        self.readout = nn.Sequential(nn.Dropout(0.1, inplace=True), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.readout(self.gate(x)).squeeze(-1)


torch.manual_seed(0)
regressor = GatedRegressor()
optimizer = torch.optim.Adam(regressor.parameters(), lr=1e-3)
loss_fn = nn.MSELoss()
for step in range(3):
    x, y = torch.randn(16, 20), torch.randn(16)
    loss = loss_fn(regressor(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
