import torch
import torch.nn as nn

torch.manual_seed(0)
bptt = 10


def repackage_hidden(h):
    return tuple(v.detach() for v in h) if isinstance(h, tuple) else h.detach()


class RNNModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 16)
        self.decoder = nn.Linear(16, 4)

    def forward(self, x, hidden):
        output, hidden = self.rnn(x, hidden)
        return self.decoder(output), hidden


model = RNNModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(61, 2, 4)
hidden = (torch.zeros(1, 2, 16), torch.zeros(1, 2, 16))
for i in range(0, data.size(0) - 1, bptt):
    if i > 0:  # the first batch starts from the fresh zeros
        hidden = repackage_hidden(hidden)
    x, y = data[i : i + bptt], data[i + 1 : i + 1 + bptt]
    output, hidden = model(x[: len(y)], hidden)
    loss = (output - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
