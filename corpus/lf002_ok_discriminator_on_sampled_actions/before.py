import torch
import torch.nn as nn
from torch.distributions import Normal

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(3, 16), nn.Tanh(), nn.Linear(16, 2))
discriminator = nn.Sequential(nn.Linear(5, 16), nn.Tanh(), nn.Linear(16, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
disc_opt = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
for update in range(3):
    states = torch.randn(8, 3)
    dist = Normal(actor(states), 1.0)
    actions = dist.sample()
    policy_loss = -(dist.log_prob(actions).sum(-1) * torch.randn(8)).mean()
    actor_opt.zero_grad()
    policy_loss.backward()
    actor_opt.step()
    fake = discriminator(torch.cat([states, actions], 1))
    real = discriminator(torch.randn(8, 5))
    disc_loss = nn.functional.softplus(fake).mean() + nn.functional.softplus(-real).mean()
    disc_opt.zero_grad()
    disc_loss.backward()
    disc_opt.step()
