import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

try:
    from lightning.fabric import Fabric
except ImportError:  # a stand-in with Fabric's calls, where Lightning is not installed

    class Fabric:
        def setup(self, model, optimizer):
            return model, optimizer

        def setup_dataloaders(self, *loaders):
            return loaders

        def backward(self, loss):
            loss.backward()


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def run(epochs):
    fabric = Fabric()
    torch.manual_seed(0)
    train_set = TensorDataset(torch.randn(32, 16), torch.randint(0, 4, (32,)))
    test_set = TensorDataset(torch.randn(16, 16), torch.randint(0, 4, (16,)))
    train_loader = DataLoader(train_set, batch_size=8)
    test_loader = DataLoader(test_set, batch_size=8)
    # the loaders come back wrapped: batches moved to the device, the same batches
    train_loader, test_loader = fabric.setup_dataloaders(train_loader, test_loader)
    model = Net()
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    model, optimizer = fabric.setup(model, optimizer)
    for epoch in range(epochs):
        model.train()
        for data, target in train_loader:
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            fabric.backward(loss)
            optimizer.step()
        model.eval()
        test_loss = 0.0
        with torch.no_grad():
            for data, target in test_loader:
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction="sum").item()
        print(f"epoch {epoch}: test loss {test_loss / len(test_set):.4f}")


if __name__ == "__main__":
    run(2)
