import torch
import torch.nn as nn
import torch.nn.functional as F


class TwoHeads(nn.Module):
    """A classifier head reads the features before an in-place ReLU changes them for the
    embedding head: the Linear keeps its input for its weight's gradient."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(10, 32)
        self.classifier = nn.Linear(32, 5)
        self.embed = nn.Linear(32, 8)

    def forward(self, x):
        feat = self.backbone(x)
        logits = self.classifier(feat)
        feat = F.relu(feat, inplace=True)
        return logits, self.embed(feat)


torch.manual_seed(0)
net = TwoHeads()
optimizer = torch.optim.SGD(net.parameters(), lr=0.05)
for _ in range(4):
    x, y = torch.randn(6, 10), torch.randint(0, 5, (6,))
    logits, embedding = net(x)
    loss = F.cross_entropy(logits, y) + 0.1 * embedding.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
