import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
criterion = nn.CrossEntropyLoss()
history = {"loss": [], "grad_norm": []}
for step in range(6):
    x, y = torch.randn(8, 6), torch.randint(0, 3, (8,))
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    history["loss"].append(loss.item())
    history["grad_norm"].append(norm.item())
print("last loss %.3f, grad norm %.3f" % (history["loss"][-1], history["grad_norm"][-1]))
