import torch
import torch.nn as nn


class MultiHead(nn.Module):
    def __init__(self, n_heads=3):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.heads = nn.ModuleList([nn.Linear(32, 1) for _ in range(n_heads)])

    def forward(self, x):
        h = self.trunk(x)
        return [head(h) for head in self.heads]


torch.manual_seed(0)
model = MultiHead()
optimizers = [torch.optim.Adam(head.parameters(), lr=1e-3) for head in model.heads]
trunk_optimizer = torch.optim.Adam(model.trunk.parameters(), lr=1e-4)

for step in range(3):
    x, targets = torch.randn(16, 12), torch.randn(3, 16, 1)
    outputs = model(x)
    losses = [nn.functional.mse_loss(out, t) for out, t in zip(outputs, targets)]
    trunk_optimizer.zero_grad()
    for i, (opt, loss) in enumerate(zip(optimizers, losses)):
        opt.zero_grad()
        loss.backward(retain_graph=i < len(losses) - 1)
        opt.step()
    trunk_optimizer.step()
