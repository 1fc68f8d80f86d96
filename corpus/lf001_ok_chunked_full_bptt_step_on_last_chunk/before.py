import torch
import torch.nn as nn

torch.manual_seed(0)
rnn = nn.GRU(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
seqs = torch.randn(3, 12, 2, 4)
for seq in seqs:
    h = torch.zeros(1, 2, 8)
    chunks = seq.split(4)
    for k, chunk in enumerate(chunks):
        out, h = rnn(chunk, h)
        loss = head(out).pow(2).mean()
        loss.backward(retain_graph=k < len(chunks) - 1)
        if k == len(chunks) - 1:
            optimizer.step()
            optimizer.zero_grad()
