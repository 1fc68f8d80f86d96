import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(list(rnn.parameters()) + list(head.parameters()), lr=0.1)
data = torch.randn(3, 5, 2, 4)
for epoch in range(2):
    for seq in data:
        for t in range(seq.shape[0]):
            if t == 0:  # each sequence starts from a fresh state
                h = torch.zeros(2, 8)
            h = rnn(seq[t], h)
            loss = head(h).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
