import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

import utils


class Actor(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim, 32), nn.ReLU(), nn.Linear(32, action_dim))

    def forward(self, state):
        return torch.tanh(self.net(state))


class Critic(nn.Module):
    def __init__(self, state_dim, action_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(state_dim + action_dim, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, state, action):
        return self.net(torch.cat([state, action], 1))


class TD3:
    def __init__(self, state_dim, action_dim, policy_freq=2, tau=0.005):
        self.actor = Actor(state_dim, action_dim)
        self.critic = Critic(state_dim, action_dim)
        self.critic_target = copy.deepcopy(self.critic)
        self.actor_optimizer = torch.optim.Adam(self.actor.parameters(), lr=3e-4)
        self.critic_optimizer = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.policy_freq, self.tau = policy_freq, tau
        self.total_it = 0

    def train(self, state, action, target_q):
        self.total_it += 1
        critic_loss = F.mse_loss(self.critic(state, action), target_q)
        utils.optimize(self.critic_optimizer, critic_loss)
        if self.total_it % self.policy_freq == 0:  # delayed policy update
            # the policy's loss, computed with the critic its update just stepped
            actor_loss = -self.critic(state, self.actor(state)).mean()
            utils.optimize(self.actor_optimizer, actor_loss)
            utils.soft_update(self.critic_target, self.critic, self.tau)
