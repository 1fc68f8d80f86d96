# A session-based recommender (SR-GNN style): train_test() runs one epoch and steps the model's
# StepLR first; the decay every 3 epochs comes one epoch early.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 2)
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        self.scheduler = torch.optim.lr_scheduler.StepLR(self.optimizer, step_size=3, gamma=0.1)


def train_test(model, batches):
    for x, y in batches:
        model.optimizer.zero_grad()
        loss = nn.functional.mse_loss(model.net(x), y)
        loss.backward()
        model.optimizer.step()
    model.scheduler.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Model()
    data = [(torch.randn(3, 4), torch.randn(3, 2)) for _ in range(2)]
    for epoch in range(4):
        train_test(model, data)
