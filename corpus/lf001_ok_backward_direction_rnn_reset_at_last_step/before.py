import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)
sequences = torch.randn(3, 6, 2, 4)
for epoch in range(2):
    for seq in sequences:
        steps = seq.shape[0]
        loss = 0
        for t in reversed(range(steps)):  # a right-to-left pass over the sequence
            if t == steps - 1:
                hidden = torch.zeros(2, 8)
            hidden = cell(seq[t], hidden)
            loss = loss + head(hidden).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
