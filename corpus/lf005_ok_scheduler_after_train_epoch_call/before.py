# The epoch's batches run in a helper, and the StepLR is stepped once the helper returns: the
# documented order.
import torch
import torch.nn as nn


def train_one_epoch(network, opt, batches):
    for inputs, labels in batches:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(network(inputs), labels)
        loss.backward()
        opt.step()


torch.manual_seed(0)
network = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 3))
opt = torch.optim.SGD(network.parameters(), lr=0.1)
decay = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
batches = [(torch.randn(4, 6), torch.randint(0, 3, (4,))) for _ in range(3)]

for epoch in range(3):
    train_one_epoch(network, opt, batches)
    decay.step()
