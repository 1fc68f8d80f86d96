# A regression loop that keeps each batch's loss in a list and reports the epoch's mean with
# torch.stack(...).mean().item(): the list holds every batch's graph until the next epoch.
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 24), nn.Tanh(), nn.Linear(24, 1))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
batches = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(5)]

for epoch in range(2):
    batch_losses = []
    for inputs, targets in batches:
        loss = nn.functional.smooth_l1_loss(net(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        batch_losses.append(loss)
    print(f"epoch {epoch}: mean loss {torch.stack(batch_losses).mean().item():.4f}")
