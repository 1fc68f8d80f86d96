import torch
import torch.nn as nn
import torch.nn.functional as F


class Classifier(nn.Module):
    """Linear -> ReLU(True) -> Dropout is safe (a Linear keeps its input, not its output),
    but the in-place scale changes what the in-place ReLU kept."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 32)
        self.fc2 = nn.Linear(32, 32)
        self.out = nn.Linear(32, 3)
        self.relu = nn.ReLU(True)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        x = self.drop(self.relu(self.fc1(x)))
        x = F.relu(self.fc2(x), inplace=True)
        x = x.mul(0.5)
        return self.out(x)


torch.manual_seed(0)
model = Classifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(3):
    x, y = torch.randn(8, 20), torch.randint(0, 3, (8,))
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
