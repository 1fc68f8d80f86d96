import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.BCEWithLogitsLoss()

for epoch in range(2):
    for _ in range(3):
        x, y = torch.randn(6, 8), torch.randint(0, 2, (6, 1)).float()
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        x, y = torch.randn(6, 8), torch.randint(0, 2, (6, 1)).float()
        probs = torch.sigmoid(model(x))
        probs[probs >= 0.5] = 1.0  # threshold in place: nothing is saved under no_grad
        probs[probs < 0.5] = 0.0
        print("accuracy", (probs == y).float().mean().item())
