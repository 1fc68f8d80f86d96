import torch.nn.functional as F


class Trainer:
    def __init__(self, model, optimizer):
        self.model, self.optimizer = model, optimizer

    def fit(self, batches):
        for inputs, targets in batches:
            loss = F.mse_loss(self.model(inputs), targets)
            loss.backward()
            self.optimizer.step()
        return loss.item()
