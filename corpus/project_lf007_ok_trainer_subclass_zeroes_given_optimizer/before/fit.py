import torch
import torch.nn as nn

from regression import RegressionTrainer

if __name__ == "__main__":
    torch.manual_seed(4)
    network = nn.Sequential(nn.Linear(5, 12), nn.ReLU(), nn.Linear(12, 1))
    optimizer = torch.optim.SGD(network.parameters(), lr=0.02, momentum=0.5)
    batches = [(torch.randn(6, 5), torch.randn(6, 1)) for _ in range(4)]
    trainer = RegressionTrainer(network, nn.MSELoss(), optimizer, epochs=3)
    print(trainer.fit(batches))
