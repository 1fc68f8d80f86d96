import torch
import torch.nn as nn
from optim import SGDClearing
from trainer import Trainer

torch.manual_seed(0)
model = nn.Linear(3, 1)
optimizer = SGDClearing(model.parameters(), lr=0.1)
batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
print(Trainer(model, optimizer).fit(batches))
