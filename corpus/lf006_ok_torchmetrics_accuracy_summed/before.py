import types

import torch
import torch.nn as nn

try:
    import torchmetrics
except ImportError:  # torchmetrics' Accuracy, where torchmetrics is not installed

    class _Accuracy(nn.Module):
        def __init__(self, task, num_classes):
            super().__init__()

        def forward(self, preds, target):
            return (preds.argmax(dim=1) == target).float().mean()

    torchmetrics = types.SimpleNamespace(Accuracy=_Accuracy)


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 4))
loss_fn = nn.CrossEntropyLoss()
accuracy_fn = torchmetrics.Accuracy(task="multiclass", num_classes=4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
batches = [(torch.randn(16, 8), torch.randint(0, 4, (16,))) for _ in range(4)]
for epoch in range(3):
    model.train()
    train_loss, train_acc = 0, 0
    for X, y in batches:
        y_pred = model(X)
        loss = loss_fn(y_pred, y)
        train_loss += loss.item()
        train_acc += accuracy_fn(y_pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    train_loss /= len(batches)
    train_acc /= len(batches)
    print(f"Epoch {epoch} | loss {train_loss:.4f} | accuracy {train_acc:.4f}")
