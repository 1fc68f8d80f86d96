import torch
import torch.nn as nn

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(5, 10), nn.ReLU())
head = nn.Linear(10, 1)
trunk_opt = torch.optim.SGD(trunk.parameters(), lr=0.05)
head_opt = torch.optim.SGD(head.parameters(), lr=0.05)
for step in range(3):
    features = trunk(torch.randn(7, 5))
    aux_loss = features.pow(2).mean()
    main_loss = head(features).abs().mean()
    trunk_opt.zero_grad()
    head_opt.zero_grad()
    aux_loss.backward(retain_graph=True)
    main_loss.backward()
    trunk_opt.step()
    head_opt.step()
