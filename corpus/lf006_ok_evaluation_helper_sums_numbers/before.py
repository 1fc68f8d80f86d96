import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()
train_batches = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(2)]
val_batches = [(torch.randn(8, 6), torch.randn(8, 1)) for _ in range(3)]


def evaluate(batches):
    model.eval()
    total_loss = 0.0
    for x, y in batches:
        total_loss += criterion(model(x), y).item()
    print(f"validation loss {total_loss / len(batches):.4f}")
    model.train()


for epoch in range(3):
    for x, y in train_batches:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    evaluate(val_batches)
