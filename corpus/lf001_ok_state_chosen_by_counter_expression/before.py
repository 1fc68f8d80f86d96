import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)
sequences = torch.randn(3, 5, 2, 4)
hidden = torch.zeros(2, 8)
for epoch in range(2):
    for seq in sequences:
        loss = 0
        for t in range(seq.shape[0]):
            hidden = cell(seq[t], torch.zeros(2, 8) if t == 0 else hidden)
            loss = loss + head(hidden).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
