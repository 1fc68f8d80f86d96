import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, lr=0.05, epochs=3):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=epochs)
        self.epochs = epochs

    def fit(self, batches):
        for epoch in range(self.epochs):
            for x, y in batches:
                self.optimizer.zero_grad()
                loss = nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                self.optimizer.step()
            self.scheduler.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [(torch.randn(4, 3), torch.randn(4, 2)) for _ in range(2)]
    Trainer(nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 2))).fit(data)
