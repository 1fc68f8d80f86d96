import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, head, lr=0.01):
        self.model = model
        self.head = head
        self.optimizer = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=lr)
        self.hidden = None

    def fit(self, batches, epochs=1):
        for epoch in range(epochs):
            for x, y in batches:
                if self.hidden is not None:
                    self.hidden = self.hidden.detach()
                out, self.hidden = self.model(x, self.hidden)
                loss = nn.functional.mse_loss(self.head(out), y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    batches = [(torch.randn(4, 2, 3), torch.randn(4, 2, 1)) for _ in range(3)]
    Trainer(nn.GRU(3, 7), nn.Linear(7, 1)).fit(batches, epochs=2)
