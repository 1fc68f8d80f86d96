"""A loss module whose methods are module-level functions bound in the class body
(`forward = _forward`, as torchrl's DDPG tutorial writes its loss): the forward returns the
actor's and the critic's losses in a dict, each built from its own network, so the second
backward goes through nothing the first freed."""

import torch
from torch import nn


def _init(self):
    nn.Module.__init__(self)
    self.actor = nn.Linear(4, 1)
    self.critic = nn.Linear(4, 1)


def _forward(self, x):
    return {"loss_actor": self.actor(x).mean(), "loss_value": self.critic(x).pow(2).mean()}


class TwoLosses(nn.Module):
    __init__ = _init
    forward = _forward


torch.manual_seed(0)
loss_module = TwoLosses()
actor_opt = torch.optim.SGD(loss_module.actor.parameters(), lr=0.1)
critic_opt = torch.optim.SGD(loss_module.critic.parameters(), lr=0.1)
for step in range(3):
    losses = loss_module(torch.randn(8, 4))
    losses["loss_actor"].backward()
    actor_opt.step()
    actor_opt.zero_grad()
    losses["loss_value"].backward()
    critic_opt.step()
    critic_opt.zero_grad()
print("3 steps: each loss's backward through its own network")
