import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)


def train(model, optimizer, steps=4):
    for _ in range(steps):
        x = torch.randn(8, 6)
        target = torch.randint(1, 4, (8,))
        probs = torch.softmax(model(x), dim=1)
        probs = probs.clone()
        probs[:, 0] = 0.0  # class 0 is never a target here
        loss = -torch.log(probs.gather(1, target[:, None]) + 1e-8).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


train(model, optimizer)
