import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRU(3, 5)
head = nn.Linear(5, 1)
optimizer = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
batches = [(torch.randn(4, 2, 3), torch.randn(4, 2, 1)) for _ in range(3)]
hidden = torch.zeros(1, 2, 5)
for x, y in batches:
    out, hidden = rnn(x, hidden)
    loss = (head(out) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
