import torch
import torch.nn as nn

from models import pretrained_encoder, unfreeze

torch.manual_seed(0)
encoder = pretrained_encoder()
head = nn.Linear(6, 1)
unfreeze(encoder)  # fine-tune the encoder with the head
optimizer = torch.optim.SGD([*head.parameters(), *encoder.parameters()], lr=0.1)
hidden = torch.zeros(1, 2, 6)
for step in range(5):
    out, hidden = encoder(torch.randn(4, 2, 3), hidden)
    loss = head(out).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
