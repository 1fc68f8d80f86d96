import torch
import torch.nn as nn


class Policy(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim, 48), nn.ReLU(), nn.Linear(48, act_dim))

    def forward(self, obs):
        return torch.tanh(self.body(obs))


class QNet(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(obs_dim + act_dim, 48), nn.ReLU(), nn.Linear(48, 1))

    def forward(self, obs, act):
        return self.body(torch.cat([obs, act], dim=1))
