import torch
import torch.nn as nn

torch.manual_seed(0)


class DummyBody(nn.Module):
    """A feature body that passes the state through (the default when no body is given)."""

    def __init__(self, state_dim):
        super().__init__()
        self.feature_dim = state_dim

    def forward(self, x):
        return x


class ActorCriticNet(nn.Module):
    def __init__(self, state_dim):
        super().__init__()
        self.phi_body = DummyBody(state_dim)
        self.actor = nn.Linear(state_dim, 1)
        self.critic = nn.Linear(state_dim, 1)

    def forward(self, obs):
        phi = self.phi_body(obs)
        return torch.tanh(self.actor(phi)), self.critic(phi)


net = ActorCriticNet(3)
actor_opt = torch.optim.SGD(net.actor.parameters(), lr=0.1)
critic_opt = torch.optim.SGD(net.critic.parameters(), lr=0.1)
for epoch in range(3):
    action, value = net(torch.randn(4, 3))
    actor_opt.zero_grad()
    action.pow(2).mean().backward()
    actor_opt.step()
    critic_opt.zero_grad()
    value.pow(2).mean().backward()
    critic_opt.step()
