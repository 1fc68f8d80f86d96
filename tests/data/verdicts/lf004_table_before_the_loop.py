import torch
import torch.nn as nn

torch.manual_seed(0)
embedding = nn.Embedding(5, 4)
head = nn.Linear(4, 1)
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
REBUILD_EACH_STEP = True
table = torch.tanh(embedding.weight)  # a graph to the embedding, built once
for step in range(8):
    if REBUILD_EACH_STEP:
        table = torch.tanh(embedding.weight)
    loss = head(torch.randn(6, 4)).pow(2).mean()
    if step % 4 == 0:  # a regulariser through the table, now and then
        loss = loss + head(table).pow(2).mean()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
