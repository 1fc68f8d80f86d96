import torch
import torch.nn as nn

HIDDEN = 20


def init_or_detach(hidden, batch_size):
    if hidden is None or hidden.size(1) != batch_size:
        return torch.zeros(1, batch_size, HIDDEN)
    return hidden.detach()


torch.manual_seed(0)
gru = nn.GRU(5, HIDDEN)
head = nn.Linear(HIDDEN, 1)
optimizer = torch.optim.Adam([*gru.parameters(), *head.parameters()], lr=1e-3)
batch_sizes = [4, 4, 4, 3, 3, 4]

hidden = None
for bs in batch_sizes:
    x, y = torch.randn(7, bs, 5), torch.randn(bs, 1)
    hidden = init_or_detach(hidden, bs)
    out, hidden = gru(x, hidden)
    loss = nn.functional.mse_loss(head(out[-1]), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
