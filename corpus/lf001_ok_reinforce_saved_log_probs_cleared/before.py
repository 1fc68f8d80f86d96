import torch
import torch.nn as nn
from torch.distributions import Categorical


class Policy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
        self.saved_log_probs = []
        self.rewards = []

    def forward(self, obs):
        return torch.softmax(self.body(obs), dim=-1)


def select_action(policy, obs):
    dist = Categorical(policy(obs))
    action = dist.sample()
    policy.saved_log_probs.append(dist.log_prob(action))
    return action.item()


def finish_episode(policy, optimizer, gamma=0.99):
    returns, running = [], 0.0
    for reward in reversed(policy.rewards):
        running = reward + gamma * running
        returns.insert(0, running)
    returns = torch.tensor(returns)
    loss = torch.stack([-lp * r for lp, r in zip(policy.saved_log_probs, returns)]).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    del policy.saved_log_probs[:]
    policy.rewards.clear()


torch.manual_seed(0)
policy = Policy()
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(3):
    for t in range(5):
        select_action(policy, torch.randn(4))
        policy.rewards.append(float(t % 2))
    finish_episode(policy, optimizer)
