import torch
import torch.nn as nn

torch.manual_seed(0)
N_AGENTS, OBS, ACT, TAU, GAMMA = 2, 3, 2, 0.05, 0.9


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS, 16), nn.ReLU(), nn.Linear(16, ACT), nn.Tanh())

    def forward(self, obs):
        return self.net(obs)


class Critic(nn.Module):
    """Sees every agent's observation and action (centralised critic)."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(N_AGENTS * (OBS + ACT), 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, obs, actions):
        return self.net(torch.cat([*obs, *actions], dim=1))


class Agent:
    def __init__(self):
        self.actor, self.critic = Actor(), Critic()
        self.actor_target, self.critic_target = Actor(), Critic()
        self.actor_target.load_state_dict(self.actor.state_dict())
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.actor_optim = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_optim = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def soft_update(self):
        for target, net in ((self.actor_target, self.actor), (self.critic_target, self.critic)):
            for t, p in zip(target.parameters(), net.parameters()):
                t.data.copy_((1 - TAU) * t.data + TAU * p.data)

    def train(self, index, batch, agents):
        obs, actions, reward, next_obs = batch
        with torch.no_grad():
            next_actions = [agent.actor_target(o) for agent, o in zip(agents, next_obs)]
            target_q = reward + GAMMA * self.critic_target(next_obs, next_actions)
        q = self.critic(obs, actions)
        critic_loss = (target_q - q).pow(2).mean()
        actions = list(actions)
        actions[index] = self.actor(obs[index])
        actor_loss = -self.critic(obs, actions).mean()

        self.critic_optim.zero_grad()
        self.actor_optim.zero_grad()
        critic_loss.backward(retain_graph=True)
        actor_loss.backward(inputs=list(self.actor.parameters()))
        self.critic_optim.step()
        self.actor_optim.step()
        self.soft_update()


agents = [Agent() for _ in range(N_AGENTS)]
for step in range(3):
    batch = (
        [torch.randn(8, OBS) for _ in range(N_AGENTS)],
        [torch.rand(8, ACT) * 2 - 1 for _ in range(N_AGENTS)],
        torch.randn(8, 1),
        [torch.randn(8, OBS) for _ in range(N_AGENTS)],
    )
    for index, agent in enumerate(agents):
        agent.train(index, batch, agents)
    print(step)
