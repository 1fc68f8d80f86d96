from collections import namedtuple

import torch
import torch.nn as nn

Objectives = namedtuple("Objectives", ["policy", "value", "temperature"])


class Learner:
    def __init__(self):
        self.actor = nn.Linear(4, 2)
        self.value = nn.Linear(6, 1)
        self.log_temp = torch.zeros(1, requires_grad=True)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.value_opt = torch.optim.Adam(self.value.parameters(), lr=1e-3)
        self.temp_opt = torch.optim.Adam([self.log_temp], lr=1e-3)

    def objectives(self, obs, act, target):
        action = torch.tanh(self.actor(obs))
        log_prob = -(action**2).sum(1, keepdim=True)
        temperature_loss = -(self.log_temp * (log_prob + 1.0).detach()).mean()
        policy_loss = (self.log_temp.exp().detach() * log_prob).mean()
        value_loss = (self.value(torch.cat([obs, act], 1)) - target).pow(2).mean()
        stats = {"log_prob": log_prob.mean().item()}
        return Objectives(policy=policy_loss, value=value_loss, temperature=temperature_loss), stats

    def update(self, obs, act, target):
        found, stats = self.objectives(obs, act, target)
        self.temp_opt.zero_grad()
        found.temperature.backward()
        self.temp_opt.step()
        self.actor_opt.zero_grad()
        found.policy.backward()
        self.actor_opt.step()
        self.value_opt.zero_grad()
        found.value.backward()
        self.value_opt.step()
        return stats


torch.manual_seed(0)
learner = Learner()
for step in range(3):
    learner.update(torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 1))
