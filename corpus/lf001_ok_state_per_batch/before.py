import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(5, 10, batch_first=True)
        self.fc = nn.Linear(10, 3)

    def init_hidden(self, batch):
        return (torch.zeros(1, batch, 10), torch.zeros(1, batch, 10))

    def forward(self, x, hidden):
        out, hidden = self.lstm(x, hidden)
        return self.fc(out[:, -1]), hidden


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(4):
    x, y = torch.randn(6, 7, 5), torch.randint(0, 3, (6,))
    hidden = model.init_hidden(6)
    logits, hidden = model(x, hidden)
    loss = nn.functional.cross_entropy(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
