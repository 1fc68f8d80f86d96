import torch
import torch.nn as nn


class MultiScaleNet(nn.Module):
    def __init__(self, scales=(1, 2, 4)):
        super().__init__()
        self.body = nn.Sequential(nn.Conv1d(2, 8, 3, padding=1), nn.ReLU())
        self.heads = nn.ModuleList([nn.Conv1d(8, 1, 1) for _ in scales])
        self.scales = scales

    def forward(self, x):
        f = self.body(x)
        return [head(nn.functional.avg_pool1d(f, s)) for head, s in zip(self.heads, self.scales)]


torch.manual_seed(0)
model = MultiScaleNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for it in range(4):
    x, target = torch.randn(4, 2, 16), torch.randn(4, 1, 16)
    preds = model(x)
    losses = []
    for pred, s in zip(preds, model.scales):
        losses.append(nn.functional.l1_loss(pred, nn.functional.avg_pool1d(target, s)))
    loss = torch.stack(losses).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
