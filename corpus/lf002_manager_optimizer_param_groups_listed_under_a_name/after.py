import torch
import torch.nn as nn

manager = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
goal_init = nn.Parameter(torch.zeros(4))
worker = nn.Linear(4, 3)
groups = [{"params": manager.parameters()}, {"params": [goal_init], "lr": 1e-2}]
mana_opt = torch.optim.Adam(groups, lr=1e-3)
work_opt = torch.optim.Adam(worker.parameters(), lr=1e-3)
for step in range(3):
    goal = manager(torch.randn(5, 4)) + goal_init
    mana_loss = goal.pow(2).mean()
    work_loss = worker(goal).logsumexp(1).mean()
    mana_opt.zero_grad()
    work_opt.zero_grad()
    mana_loss.backward(retain_graph=True)
    work_loss.backward(inputs=list(worker.parameters()))
    mana_opt.step()
    work_opt.step()
