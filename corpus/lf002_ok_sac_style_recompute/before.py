import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 2), nn.Tanh())
q_net = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))
policy_opt = torch.optim.Adam(policy.parameters(), lr=3e-4)
q_opt = torch.optim.Adam(q_net.parameters(), lr=3e-4)
for step in range(3):
    s, a, target = torch.randn(8, 3), torch.randn(8, 2), torch.randn(8, 1)
    q_loss = (q_net(torch.cat([s, a], 1)) - target).pow(2).mean()
    q_opt.zero_grad()
    q_loss.backward()
    q_opt.step()
    policy_loss = -q_net(torch.cat([s, policy(s)], 1)).mean()
    policy_opt.zero_grad()
    policy_loss.backward()
    policy_opt.step()
