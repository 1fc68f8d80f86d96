import torch
from torch import nn

torch.manual_seed(0)
world = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 6))
actor = nn.Sequential(nn.Linear(6, 6), nn.Tanh())
opt_world = torch.optim.Adam(world.parameters(), lr=1e-2)
opt_actor = torch.optim.Adam(actor.parameters(), lr=1e-2)
for step in range(4):
    obs, next_obs = torch.randn(12, 6), torch.randn(12, 6)
    latent = world(obs)
    world_loss = (latent - next_obs).pow(2).mean()
    opt_world.zero_grad()
    world_loss.backward()
    opt_world.step()
    latent = world(obs)
    # imagine one step ahead with the world model just updated
    imagined = world(actor(latent))
    actor_loss = -imagined.mean()
    opt_actor.zero_grad()
    actor_loss.backward()
    opt_actor.step()
