# A soft actor-critic policy: `sample()` runs the module's own forward through
# `self.forward(state)`, then bounds the standard deviation in place (`std.clamp_(...)`) on
# the result `exp()` keeps for its backward.
import torch
import torch.nn as nn
from torch.distributions import Normal


class GaussianPolicy(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(state_dim, 32), nn.ReLU())
        self.mean = nn.Linear(32, action_dim)
        self.log_std = nn.Linear(32, action_dim)

    def forward(self, state):
        h = self.body(state)
        return self.mean(h), self.log_std(h).clamp(-20, 2)

    def sample(self, state):
        mean, log_std = self.forward(state)
        std = log_std.exp()
        std.clamp_(min=1e-6)
        action = torch.tanh(Normal(mean, std).rsample())
        return action


torch.manual_seed(0)
policy = GaussianPolicy(3, 2)
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
for step in range(3):
    loss = -policy.sample(torch.randn(8, 3)).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
