import torch
import torch.nn as nn
import torch.nn.functional as F


class Siamese(nn.Module):
    """Both inputs go through one encoder and one projection; the projection starts with an
    in-place ReLU on what the encoder's tanh keeps."""

    def __init__(self, inputs=12, hidden=16, out=8):
        super().__init__()
        self.encode = nn.Sequential(nn.Linear(inputs, hidden), nn.Tanh())
        self.project = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(hidden, out))

    def forward(self, left, right):
        a = self.project(self.encode(left))
        b = self.project(self.encode(right))
        return F.cosine_similarity(a, b)


torch.manual_seed(0)
model = Siamese()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    left, right = torch.randn(6, 12), torch.randn(6, 12)
    same = torch.randint(0, 2, (6,)).float()
    loss = F.mse_loss(model(left, right), same)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
