import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.GRU(3, 8, batch_first=True)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
for epoch in range(2):
    epoch_loss = 0
    for _ in range(3):
        sequences = torch.randn(4, 5, 3)
        outputs, _ = encoder(sequences)
        loss = head(outputs[:, -1]).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        epoch_loss = epoch_loss + loss
    print(f"epoch {epoch}: {epoch_loss.item():.4f}")
