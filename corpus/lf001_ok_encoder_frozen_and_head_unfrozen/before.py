import torch
import torch.nn as nn

torch.manual_seed(0)


def freeze(module):
    for parameter in module.parameters():
        parameter.requires_grad_(False)


def unfreeze(module):
    for parameter in module.parameters():
        parameter.requires_grad_(True)


encoder = nn.GRU(3, 6)
head = nn.Linear(6, 1)
freeze(encoder)  # a fixed feature extractor
freeze(head)
unfreeze(head)  # only the head is trained
optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
hidden = torch.zeros(1, 2, 6)
for step in range(5):
    out, hidden = encoder(torch.randn(4, 2, 3), hidden)
    loss = head(out).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}, state keeps a graph: {hidden.requires_grad}")
