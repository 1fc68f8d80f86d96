import torch
import torch.nn as nn

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(6, 16), nn.Tanh())
actor = nn.Linear(16, 3)
critic = nn.Linear(16, 1)
actor_optimizer = torch.optim.Adam(list(trunk.parameters()) + list(actor.parameters()), lr=1e-3)
critic_optimizer = torch.optim.Adam(list(trunk.parameters()) + list(critic.parameters()), lr=1e-3)

for _ in range(4):
    states, returns = torch.randn(8, 6), torch.randn(8, 1)
    actor_optimizer.zero_grad()
    critic_optimizer.zero_grad()
    features = trunk(states)
    value = critic(features)
    critic_loss = (returns - value).pow(2).mean()
    critic_loss.backward()
    critic_optimizer.step()
    log_probs = torch.log_softmax(actor(features.detach()), dim=1)
    actor_loss = -(log_probs[:, 0] * (returns - value.detach()).squeeze(1)).mean()
    actor_loss.backward()
    actor_optimizer.step()
