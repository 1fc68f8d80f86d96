import torch
import torch.nn as nn


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""
    if isinstance(h, torch.Tensor):
        return h.detach()
    return tuple(repackage_hidden(v) for v in h)


torch.manual_seed(0)
emb, rnn, dec = nn.Embedding(30, 8), nn.LSTM(8, 16), nn.Linear(16, 30)
params = [*emb.parameters(), *rnn.parameters(), *dec.parameters()]
optimizer = torch.optim.SGD(params, lr=1.0)
stream = torch.randint(0, 30, (26, 2))
hidden = (torch.zeros(1, 2, 16), torch.zeros(1, 2, 16))
for i in range(0, 25, 5):
    data, targets = stream[i : i + 5], stream[i + 1 : i + 6]
    hidden = repackage_hidden(hidden)
    output, hidden = rnn(emb(data), hidden)
    loss = nn.functional.cross_entropy(dec(output).view(-1, 30), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
