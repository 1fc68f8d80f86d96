import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
F1 = nn.Linear(8, 4)


def train(steps=4):
    optimizer_g = torch.optim.SGD(G.parameters(), lr=0.1, momentum=0.9)
    optimizer_f = torch.optim.SGD(F1.parameters(), lr=0.1, momentum=0.9)

    def zero_grad_all():
        optimizer_g.zero_grad()
        optimizer_f.zero_grad()

    for step in range(steps):
        x, y = torch.randn(16, 6), torch.randint(0, 4, (16,))
        zero_grad_all()
        loss = F.cross_entropy(F1(G(x)), y)
        loss.backward()
        optimizer_g.step()
        optimizer_f.step()
        zero_grad_all()
        # entropy on unlabeled target data: its own backward and steps
        target = torch.randn(16, 6)
        probs = F.softmax(F1(G(target)), dim=1)
        entropy = -(probs * torch.log(probs + 1e-5)).sum(1).mean()
        (0.1 * entropy).backward()
        optimizer_f.step()
        optimizer_g.step()
        print(step, loss.item(), entropy.item())


train()
