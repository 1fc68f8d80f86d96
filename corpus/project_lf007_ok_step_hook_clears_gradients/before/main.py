import torch
import torch.nn as nn
from engine import run_epoch
from optimizers import make_optimizer

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = make_optimizer(model)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
for epoch in range(2):
    print(epoch, run_epoch(model, optimizer, batches))
