import torch
import torch.nn as nn


def apply_update(opt, objective):
    objective.backward()
    opt.step()
    opt.zero_grad()


torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for it in range(3):
    obs, act, ret = torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 1)
    critic_loss = (critic(torch.cat([obs, act], 1)) - ret).pow(2).mean()
    actor_loss = -critic(torch.cat([obs, actor(obs)], 1)).mean()
    apply_update(critic_opt, critic_loss)
    actor_loss = -critic(torch.cat([obs, actor(obs)], 1)).mean()
    apply_update(actor_opt, actor_loss)
