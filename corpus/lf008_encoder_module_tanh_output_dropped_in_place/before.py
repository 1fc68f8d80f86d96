import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    """Codes in (-1, 1): a linear layer and a tanh, as one Sequential."""

    def __init__(self, features=6, code=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(features, code), nn.Tanh())

    def forward(self, x):
        return self.net(x)


def train(steps=3):
    encoder, head = Encoder(), nn.Linear(16, 6)
    optimizer = torch.optim.Adam([*encoder.parameters(), *head.parameters()], lr=1e-3)
    for step in range(steps):
        x = torch.randn(8, 6)
        code = encoder(x)
        code = F.dropout(code, 0.1, training=True, inplace=True)
        loss = F.mse_loss(head(code), x)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(step, loss.item())


if __name__ == "__main__":
    torch.manual_seed(0)
    train()
