import torch
import torch.nn as nn

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
head1, head2 = nn.Linear(16, 1), nn.Linear(16, 1)
optimizer = torch.optim.Adam([*trunk.parameters(), *head1.parameters(), *head2.parameters()])
for step in range(4):
    h = trunk(torch.randn(10, 8))
    loss1 = head1(h).pow(2).mean()
    loss2 = head2(h).abs().mean()
    optimizer.zero_grad()
    loss1.backward(retain_graph=True)
    loss2.backward(retain_graph=True)
    optimizer.step()
