import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


@torch.no_grad()
def ema_update(teacher, student, decay=0.9):
    for t, s in zip(teacher.parameters(), student.parameters()):
        t.mul_(decay).add_(s, alpha=1 - decay)


torch.manual_seed(0)
student = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16))
teacher = copy.deepcopy(student)
for p in teacher.parameters():
    p.requires_grad_(False)
classifier = nn.Linear(16, 3)
opt_s = torch.optim.SGD(student.parameters(), lr=0.5)
opt_c = torch.optim.SGD(classifier.parameters(), lr=0.5)

for step in range(3):
    x, y = torch.randn(32, 8), torch.randint(0, 3, (32,))
    feat = student(x)
    logits = classifier(feat)
    with torch.no_grad():
        t_feat = teacher(x + 0.1 * torch.randn_like(x))
    consistency = F.mse_loss(feat, t_feat)
    opt_s.zero_grad()
    consistency.backward()
    opt_s.step()
    ema_update(teacher, student)
    feat = student(x)
    logits = classifier(feat)
    cls_loss = F.cross_entropy(logits, y)
    opt_c.zero_grad()
    cls_loss.backward()
    opt_c.step()
    print(step, consistency.item(), cls_loss.item())
