import torch
import torch.nn as nn


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(10, 32), nn.ReLU())
        self.cls_head = nn.Linear(32, 4)
        self.reg_head = nn.Linear(32, 1)

    def forward(self, x):
        feats = self.backbone(x)
        return self.cls_head(feats), self.reg_head(feats)


torch.manual_seed(0)
model = nn.DataParallel(MultiTaskNet()).double().train()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
ce, mse = nn.CrossEntropyLoss(), nn.MSELoss()

for step in range(5):
    x = torch.randn(8, 10, dtype=torch.float64)
    labels = torch.randint(0, 4, (8,))
    targets = torch.randn(8, 1, dtype=torch.float64)
    logits, pred = model(x)
    optimizer.zero_grad()
    cls_loss = ce(logits, labels)
    cls_loss.backward(retain_graph=True)
    reg_loss = mse(pred, targets)
    reg_loss.backward()
    optimizer.step()
