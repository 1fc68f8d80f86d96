"""Networks built at the top and handed to an agent object that calls them; the optimizers
are built over the networks themselves."""
import torch
import torch.nn as nn


class Agent:
    def __init__(self, actor, critic):
        self.actor = actor
        self.critic = critic

    def act(self, obs):
        return torch.tanh(self.actor(obs))

    def value(self, obs, action):
        return self.critic(torch.cat([obs, action], dim=1))


torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 2))
critic = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
agent = Agent(actor, critic)
actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)

for step in range(3):
    obs = torch.randn(16, 6)
    reward = torch.randn(16, 1)
    action = agent.act(obs)
    q = agent.value(obs, action)
    critic_loss = (q - reward).pow(2).mean()
    actor_loss = -q.mean()
    critic_optimizer.zero_grad()
    actor_optimizer.zero_grad()
    critic_loss.backward(retain_graph=True, inputs=list(critic.parameters()))
    actor_loss.backward(inputs=list(actor.parameters()))
    critic_optimizer.step()
    actor_optimizer.step()
