import torch
import torch.nn as nn

torch.manual_seed(0)
trunk = nn.Sequential(nn.Linear(6, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh())
actor = nn.Linear(32, 3)
critic = nn.Linear(32, 1)
critic_optimizer = torch.optim.Adam([*trunk.parameters(), *critic.parameters()], lr=1e-3)
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)

for update in range(3):
    states = torch.randn(10, 6)
    actions = torch.randint(0, 3, (10,))
    returns = torch.randn(10, 1)
    features = trunk(states)
    values = critic(features)
    log_probs = torch.log_softmax(actor(features), dim=-1)
    chosen = log_probs.gather(1, actions[:, None])
    critic_loss = (returns - values).pow(2).mean()
    critic_optimizer.zero_grad()
    critic_loss.backward(retain_graph=True)
    critic_optimizer.step()
    actor_loss = -(chosen * (returns - values.detach())).mean()
    actor_optimizer.zero_grad()
    actor_loss.backward()
    actor_optimizer.step()
