import copy

import torch
import torch.nn.functional as F

from common import optimise, polyak
from models import Actor, Critic


class TwinCriticAgent:
    def __init__(self, obs_dim, act_dim, lr=1e-3, rate=0.01):
        self.actor = Actor(obs_dim, act_dim)
        self.critics = [Critic(obs_dim, act_dim), Critic(obs_dim, act_dim)]
        self.first, self.second = self.critics
        self.first_slow = copy.deepcopy(self.first)
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=lr)
        self.first_opt = torch.optim.Adam(self.first.parameters(), lr=lr)
        self.second_opt = torch.optim.Adam(self.second.parameters(), lr=lr)
        self.rate = rate

    def train_step(self, obs, act, target):
        first_loss = F.mse_loss(self.first(obs, act), target)
        second_loss = F.mse_loss(self.second(obs, act), target)
        proposal = self.actor(obs)
        actor_loss = -torch.min(self.first(obs, proposal), self.second(obs, proposal)).mean()

        optimise(self.actor_opt, actor_loss)
        optimise(self.first_opt, first_loss)
        optimise(self.second_opt, second_loss)
        polyak(self.first_slow, self.first, self.rate)
        return first_loss.item(), second_loss.item(), actor_loss.item()
