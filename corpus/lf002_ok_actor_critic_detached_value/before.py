import torch
import torch.nn as nn

torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for update in range(3):
    states, actions, returns = torch.randn(10, 4), torch.randint(0, 2, (10,)), torch.randn(10, 1)
    values = critic(states)
    critic_loss = (returns - values).pow(2).mean()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    advantage = (returns - values).detach()
    log_prob = torch.log_softmax(actor(states), -1).gather(1, actions[:, None])
    actor_loss = -(log_prob * advantage).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
