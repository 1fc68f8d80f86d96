import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return self.fc(x)

    def compute_loss(self, scores, y):
        return {"total": nn.functional.cross_entropy(scores, y)}


def get_model():
    return Net()
