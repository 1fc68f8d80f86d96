import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(3, 32)
        self.mu = nn.Linear(32, 1)

    def forward(self, state):
        mu = torch.tanh(self.mu(F.relu(self.hidden(state)))) * 2
        dist = Normal(mu, torch.ones_like(mu))
        return dist.sample(), dist


class Agent:
    """An A2C agent that keeps one transition as a list: the actor's part when it acts, the
    environment's part when it steps, unpacked item by item when it learns."""

    def __init__(self):
        self.actor = Actor()
        self.critic = nn.Sequential(nn.Linear(3, 32), nn.ReLU(), nn.Linear(32, 1))
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=1e-4)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=1e-3)
        self.transition = []

    def select_action(self, state):
        state = torch.as_tensor(state)
        action, dist = self.actor(state)
        log_prob = dist.log_prob(action).sum(dim=-1)
        self.transition = [state, log_prob]
        return action.clamp(-2.0, 2.0).detach()

    def step(self, action):
        next_state = torch.randn(3)
        reward = -float(action.abs().sum())
        done = False
        self.transition.extend([next_state, reward, done])
        return next_state, reward, done

    def update_model(self, gamma=0.9):
        state, log_prob, next_state, reward, done = self.transition
        pred_value = self.critic(state)
        target = reward + gamma * self.critic(next_state) * (1 - done)
        value_loss = F.smooth_l1_loss(pred_value, target.detach())
        self.critic_optimizer.zero_grad()
        value_loss.backward()
        self.critic_optimizer.step()

        advantage = (target - pred_value).detach()
        policy_loss = -(advantage * log_prob).mean()
        self.actor_optimizer.zero_grad()
        policy_loss.backward()
        self.actor_optimizer.step()
        return policy_loss.item(), value_loss.item()


torch.manual_seed(0)
agent = Agent()
state = torch.randn(3)
for frame in range(20):
    action = agent.select_action(state)
    state, reward, done = agent.step(action)
    actor_loss, critic_loss = agent.update_model()
print(f"actor loss {actor_loss:.3f}, critic loss {critic_loss:.3f}")
