import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(8, 10), torch.randint(0, 4, (8,))) for _ in range(3)]

for epoch in range(3):
    total_loss = 0.0
    for x, y in batches:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        total_loss += loss.detach()
        optimizer.step()
    scheduler.step()
    print(f"epoch {epoch}: mean loss {total_loss / len(batches):.4f}")
