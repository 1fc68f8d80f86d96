import torch
import torch.nn as nn


class StatefulLSTM(nn.Module):
    def __init__(self, features, hidden_size):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden_size, batch_first=True)
        self.out = nn.Linear(hidden_size, features)
        self.hidden = None

    def reset_state(self):
        self.hidden = None

    def forward(self, x):
        y, self.hidden = self.lstm(x, self.hidden)
        return self.out(y)


torch.manual_seed(0)
model = StatefulLSTM(3, 16)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
signal = torch.randn(4, 40, 3)

for epoch in range(2):
    model.reset_state()
    for t in range(0, 32, 8):
        window, target = signal[:, t : t + 8], signal[:, t + 1 : t + 9]
        prediction = model(window)
        model.hidden = tuple(s.detach() for s in model.hidden)
        loss = (prediction - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
