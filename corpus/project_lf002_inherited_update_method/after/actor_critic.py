import torch
import torch.nn as nn
import torch.nn.functional as F

from agent_base import AgentBase


class ActorCriticAgent(AgentBase):
    def __init__(self, obs_dim=3, act_dim=2, hidden=16):
        self.actor = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, act_dim))
        self.critic = nn.Sequential(nn.Linear(obs_dim + act_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.actor_opt = torch.optim.Adam(self.actor.parameters(), lr=1e-3)
        self.critic_opt = torch.optim.Adam(self.critic.parameters(), lr=1e-3)

    def losses(self, obs, act, target):
        critic_loss = F.mse_loss(self.critic(torch.cat([obs, act], 1)), target)
        proposal = torch.tanh(self.actor(obs))
        actor_loss = -self.critic(torch.cat([obs, proposal], 1)).mean()
        return critic_loss, actor_loss

    def apply_updates(self, critic_loss, actor_loss):
        self.optimise(self.actor_opt, self.actor, actor_loss, max_norm=5.0)
        self.optimise(self.critic_opt, self.critic, critic_loss, max_norm=5.0)

    def learn(self, obs, act, target):
        critic_loss, actor_loss = self.losses(obs, act, target)
        self.apply_updates(critic_loss, actor_loss)
        return critic_loss.item(), actor_loss.item()
