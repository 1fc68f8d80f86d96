import torch
import torch.nn as nn

torch.manual_seed(0)


class LanguageModel(nn.Module):
    """Returns `(logits, *state)` as many language models do; the state is cut here, so
    truncated backpropagation through time needs nothing of the caller."""

    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(4, 8)
        self.head = nn.Linear(8, 4)

    def forward(self, x, hidden):
        output, (h, c) = self.rnn(x, hidden)
        return self.head(output), h.detach(), c.detach()


model = LanguageModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
data = torch.randn(61, 2, 4)
hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
for i in range(0, 50, 10):
    outputs = model(data[i : i + 10], hidden)
    logits, hidden = outputs[0], outputs[1:]
    loss = (logits - data[i + 1 : i + 11]).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"loss {loss.item():.4f}")
