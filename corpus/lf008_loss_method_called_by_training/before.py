import torch
import torch.nn as nn


class MultiLabelNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 4))

    def forward(self, x):
        return self.body(x)

    def compute_loss(self, x, y, mask):
        probs = torch.sigmoid(self(x))
        probs *= mask  # ignore the labels this sample does not have
        return nn.functional.binary_cross_entropy(probs, y * mask)


torch.manual_seed(0)
model = MultiLabelNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(8, 6), torch.rand(8, 4).round()
    mask = (torch.rand(8, 4) > 0.2).float()
    loss = model.compute_loss(x, y, mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
