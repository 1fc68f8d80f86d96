import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
criterion = nn.CrossEntropyLoss()
history = {"loss": [], "accuracy": []}
for step in range(6):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    logits = model(x)
    loss = criterion(logits, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    history["loss"].append(loss.detach())
    history["accuracy"].append((logits.argmax(1) == y).float().mean().item())
print("last loss", history["loss"][-1], "accuracy", history["accuracy"][-1])
