import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
stream = torch.randn(20, 2, 4)
hidden = torch.zeros(2, 8)
loss = 0
for t in range(stream.shape[0]):
    if (t + 1) % 5 == 1:
        hidden = hidden.detach()
        loss = 0
    hidden = rnn(stream[t], hidden)
    loss = loss + head(hidden).pow(2).mean()
    if t % 5 == 4:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
