import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

try:
    from trainkit.distributed import auto_dataloaders
except ImportError:  # a stand-in for a library helper that wraps loaders for the device

    def auto_dataloaders(*loaders):
        return loaders


def train(model, optimizer, train_loader, val_loader, epochs):
    # the helper hands the loaders back, each bound to its own name again
    train_loader, val_loader = auto_dataloaders(train_loader, val_loader)
    for epoch in range(epochs):
        model.train()
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            loss = F.cross_entropy(model(inputs), targets)
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            total = sum(F.cross_entropy(model(x), y).item() for x, y in val_loader)
        print(f"epoch {epoch}: validation loss {total / len(val_loader):.4f}")


if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    make = lambda n: DataLoader(TensorDataset(torch.randn(n, 8), torch.randint(0, 3, (n,))), 4)
    train(model, optimizer, make(16), make(8), epochs=2)
