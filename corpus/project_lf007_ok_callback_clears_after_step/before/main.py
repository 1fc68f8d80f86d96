import torch
import torch.nn as nn

from callbacks import GradNormLogger
from trainer import Trainer

if __name__ == "__main__":
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    before = model.weight.detach().clone()
    batches = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
    Trainer(model, optimizer, GradNormLogger()).fit(batches)
    print("weights changed:", not torch.equal(before, model.weight.detach()))
