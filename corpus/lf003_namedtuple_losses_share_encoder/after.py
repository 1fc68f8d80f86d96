import typing

import torch
import torch.nn as nn


class TaskLosses(typing.NamedTuple):
    reconstruction: torch.Tensor
    classification: torch.Tensor


encoder = nn.Sequential(nn.Linear(10, 16), nn.ReLU())
decoder = nn.Linear(16, 10)
classifier = nn.Linear(16, 3)
optimizer = torch.optim.SGD(
    [*encoder.parameters(), *decoder.parameters(), *classifier.parameters()], lr=0.05
)


def task_losses(x, y):
    code = encoder(x)
    return TaskLosses(
        reconstruction=(decoder(code) - x).pow(2).mean(),
        classification=nn.functional.cross_entropy(classifier(code), y),
    )


torch.manual_seed(0)
for step in range(3):
    x, y = torch.randn(12, 10), torch.randint(0, 3, (12,))
    losses = task_losses(x, y)
    optimizer.zero_grad()
    losses.reconstruction.backward(retain_graph=True)
    losses.classification.backward()
    optimizer.step()
