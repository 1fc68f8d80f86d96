import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
head = nn.Linear(16, 1)
probe = nn.Linear(16, 3)
params = [*encoder.parameters(), *head.parameters(), *probe.parameters()]
optimizer = torch.optim.SGD(params, lr=0.1)
for step in range(4):
    x, target, label = torch.randn(8, 6), torch.randn(8, 1), torch.randint(0, 3, (8,))
    features = encoder(x)
    optimizer.zero_grad()
    probe_loss = F.cross_entropy(probe(features), label)
    probe_loss.backward(inputs=list(probe.parameters()))
    loss = F.mse_loss(head(features), target)
    loss.backward()
    optimizer.step()
    print(step, probe_loss.item(), loss.item())
