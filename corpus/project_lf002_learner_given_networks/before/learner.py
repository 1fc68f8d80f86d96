import copy

import torch
import torch.nn.functional as F


class DeterministicLearner:
    """Actor-critic updates on networks the caller builds."""

    def __init__(self, policy, q, gamma=0.98, lr=1e-3):
        self.policy = policy
        self.q = q
        self.q_slow = copy.deepcopy(q)
        self.pi_opt = torch.optim.Adam(self.policy.parameters(), lr=lr)
        self.q_opt = torch.optim.Adam(self.q.parameters(), lr=lr)
        self.gamma = gamma

    def step(self, obs, act, rew, next_obs):
        pi_loss = -self.q(obs, self.policy(obs)).mean()
        with torch.no_grad():
            target = rew + self.gamma * self.q_slow(next_obs, self.policy(next_obs))
        q_loss = F.smooth_l1_loss(self.q(obs, act), target)

        self.q_opt.zero_grad()
        q_loss.backward()
        self.q_opt.step()

        self.pi_opt.zero_grad()
        pi_loss.backward()
        self.pi_opt.step()
        return q_loss.item(), pi_loss.item()
