import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, head, lr=1e-3):
        self.model = model
        self.head = head
        self.optimizer = torch.optim.Adam([*model.parameters(), *head.parameters()], lr=lr)
        self.criterion = nn.MSELoss()
        self.h = None

    def train_batch(self, x, y):
        out, self.h = self.model(x, self.h)
        loss = self.criterion(self.head(out), y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()

    def fit(self, series, window=8, epochs=2):
        for epoch in range(epochs):
            self.h = None
            losses = []
            for t in range(0, series.size(0) - window, window):
                x, y = series[t : t + window], series[t + 1 : t + window + 1]
                losses.append(self.train_batch(x, y))
            print(f"epoch {epoch}: {sum(losses) / len(losses):.4f}")


torch.manual_seed(0)
series = torch.randn(49, 2, 4)
trainer = Trainer(nn.GRU(4, 16), nn.Linear(16, 4))
trainer.fit(series)
