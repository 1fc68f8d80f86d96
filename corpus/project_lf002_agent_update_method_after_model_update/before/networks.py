import torch.nn as nn

BUILDERS = {
    "mlp": lambda i, o: nn.Sequential(nn.Linear(i, 32), nn.ReLU(), nn.Linear(32, o)),
    "wide": lambda i, o: nn.Sequential(nn.Linear(i, 64), nn.Tanh(), nn.Linear(64, o)),
}


def make(kind, inputs, outputs):
    return BUILDERS[kind](inputs, outputs)
