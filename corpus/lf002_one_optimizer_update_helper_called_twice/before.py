import torch
import torch.nn as nn


def update(optimizer, loss, retain_graph=False):
    optimizer.zero_grad()
    loss.backward(retain_graph=retain_graph)
    optimizer.step()


torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
cls_head, box_head = nn.Linear(32, 5), nn.Linear(32, 4)
optimizer = torch.optim.SGD(
    [*backbone.parameters(), *cls_head.parameters(), *box_head.parameters()], lr=0.01, momentum=0.9
)

for it in range(3):
    images, labels, boxes = torch.randn(8, 12), torch.randint(0, 5, (8,)), torch.randn(8, 4)
    features = backbone(images)
    cls_loss = nn.functional.cross_entropy(cls_head(features), labels)
    box_loss = nn.functional.smooth_l1_loss(box_head(features), boxes)
    update(optimizer, cls_loss, retain_graph=True)
    update(optimizer, box_loss)
