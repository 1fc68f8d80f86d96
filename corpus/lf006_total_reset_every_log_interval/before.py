import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(8, 10), torch.randint(0, 4, (8,))) for _ in range(12)]
log_interval = 5

total_loss = 0
for batch_idx, (x, y) in enumerate(batches):
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    total_loss += loss
    if (batch_idx + 1) % log_interval == 0:
        print(f"batch {batch_idx + 1}: mean loss {total_loss.item() / log_interval:.4f}")
        total_loss = 0
