import torch
import torch.nn as nn
import torch.nn.functional as F


class StatefulLM(nn.Module):
    """A GRU language model that keeps its state between calls."""

    def __init__(self, vocabulary, width):
        super().__init__()
        self.embed = nn.Embedding(vocabulary, width)
        self.rnn = nn.GRU(width, width)
        self.decode = nn.Linear(width, vocabulary)
        self.hidden = None

    def forward(self, tokens):
        output, self.hidden = self.rnn(self.embed(tokens), self.hidden)
        return self.decode(output)


def activation_penalty(model, beta):
    """Penalises large final states of `model` (activation regularisation)."""
    return beta * model.hidden.pow(2).mean()


torch.manual_seed(0)
model = StatefulLM(10, 8)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
data = torch.randint(0, 10, (41, 3))
for epoch in range(2):
    model.hidden = None
    for i in range(0, 40, 5):
        inputs, targets = data[i : i + 5], data[i + 1 : i + 6]
        if model.hidden is not None:
            model.hidden = model.hidden.detach()
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, 10), targets.reshape(-1))
        loss = loss + activation_penalty(model, 0.5)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
