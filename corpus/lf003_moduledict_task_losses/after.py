import torch
import torch.nn as nn


class MultiTaskModel(nn.Module):
    def __init__(self, tasks):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(8, 32), nn.GELU(), nn.Linear(32, 32))
        self.heads = nn.ModuleDict({name: nn.Linear(32, n_out) for name, n_out in tasks.items()})

    def forward(self, x):
        z = self.encoder(x)
        return {name: head(z) for name, head in self.heads.items()}


torch.manual_seed(0)
tasks = {"depth": 1, "segmentation": 4, "normals": 3}
model = MultiTaskModel(tasks)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
weights = {"depth": 1.0, "segmentation": 0.5, "normals": 0.2}

for step in range(3):
    x = torch.randn(16, 8)
    targets = {name: torch.randn(16, n) for name, n in tasks.items()}
    outputs = model(x)
    losses = {name: nn.functional.mse_loss(outputs[name], targets[name]) for name in tasks}
    optimizer.zero_grad()
    for name, loss in losses.items():
        (weights[name] * loss).backward(retain_graph=True)
    optimizer.step()
