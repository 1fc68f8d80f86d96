import torch
import torch.nn as nn


def train(cell, head, batches, steps_per_batch=3):
    optimizer = torch.optim.Adam([*cell.parameters(), *head.parameters()], lr=1e-3)
    h = torch.zeros(2, cell.hidden_size)
    c = torch.zeros(2, cell.hidden_size)
    for inputs, target in batches:
        h, c = h.detach(), c.detach()
        for step in range(steps_per_batch):
            h, c = cell(inputs[step], (h, c))
        loss = (head(h) - target).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    data = [(torch.randn(3, 2, 4), torch.randn(2, 1)) for _ in range(3)]
    print(train(nn.LSTMCell(4, 5), nn.Linear(5, 1), data))
