import math

import torch
import torch.nn as nn


def add_positions(x, table):
    """Adds sinusoidal positions in place (the embedding's output is not kept for its backward)."""
    x += table[: x.size(1)]
    return x


def sinusoids(length, dim):
    position = torch.arange(length)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2) * (-math.log(10000.0) / dim))
    table = torch.zeros(length, dim)
    table[:, 0::2] = torch.sin(position * freq)
    table[:, 1::2] = torch.cos(position * freq)
    return table


class TinyLM(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.register_buffer("table", sinusoids(64, dim))
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens):
        h = self.embed(tokens) * math.sqrt(self.embed.embedding_dim)
        h = add_positions(h, self.table)
        return self.out(torch.tanh(h))


torch.manual_seed(0)
model = TinyLM(20, 8)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    tokens = torch.randint(0, 20, (4, 7))
    logits = model(tokens[:, :-1])
    loss = nn.functional.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
