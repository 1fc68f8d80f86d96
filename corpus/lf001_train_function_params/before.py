import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class SeqRegressor(nn.Module):
    def __init__(self, n_in=3, hidden=16):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, batch_first=True)
        self.fc = nn.Linear(hidden, 1)

    def forward(self, x, state):
        out, state = self.lstm(x, state)
        return self.fc(out[:, -1]), state


def train(model, optimizer, loader, criterion):
    model.train()
    state = (torch.zeros(1, 8, 16), torch.zeros(1, 8, 16))
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        pred, state = model(x, state)
        loss = criterion(pred, y)
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(loader)


torch.manual_seed(0)
dataset = TensorDataset(torch.randn(32, 5, 3), torch.randn(32, 1))
loader = DataLoader(dataset, batch_size=8, drop_last=True)
model = SeqRegressor()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()
for epoch in range(2):
    print(epoch, train(model, optimizer, loader, criterion))
