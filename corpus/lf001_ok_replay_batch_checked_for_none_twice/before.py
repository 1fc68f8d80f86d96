import torch
import torch.nn as nn
import torch.nn.functional as F


def train_task(model, optimizer, batches, replay=None, replay_weight=0.5):
    for x, y in batches:
        optimizer.zero_grad()
        loss_current = F.cross_entropy(model(x), y)
        if replay is not None:
            x_r, y_r = replay
            loss_replay = F.cross_entropy(model(x_r), y_r)
        if replay is not None:
            loss = (1 - replay_weight) * loss_current + replay_weight * loss_replay
        else:
            loss = loss_current
        loss.backward()
        optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
task_1 = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
task_2 = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
train_task(model, optimizer, task_1)
memory = (torch.randn(4, 8), torch.randint(0, 3, (4,)))
train_task(model, optimizer, task_2, replay=memory)
