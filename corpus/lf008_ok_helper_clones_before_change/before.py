import torch
import torch.nn as nn


def smooth_probs(p, eps):
    p = p.clone()  # softmax keeps its output: change a copy
    p.mul_(1 - eps).add_(eps / p.size(-1))
    return p


torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 4, (8,))
    probs = torch.softmax(model(x), dim=-1)
    probs = smooth_probs(probs, 0.1)
    loss = nn.functional.nll_loss(torch.log(probs), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
