import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.train_losses = []

    def fit(self, batches, epochs):
        for epoch in range(epochs):
            for x, y in batches:
                self.optimizer.zero_grad()
                loss = nn.functional.mse_loss(self.model(x), y)
                loss.backward()
                self.optimizer.step()
                self.train_losses.append(loss)
            self.report(epoch)

    def report(self, epoch):
        recent = self.train_losses[-5:]
        print(f"epoch {epoch}: {sum(recent) / len(recent):.4f}")


model = nn.Linear(4, 1)
trainer = Trainer(model, torch.optim.SGD(model.parameters(), lr=0.1))
batches = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(5)]
trainer.fit(batches, 2)
