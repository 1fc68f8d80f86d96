import torch


class Agent:
    def __init__(self, actor, critic):
        self.actor = actor
        self.critic = critic

    def act(self, obs):
        return torch.tanh(self.actor(obs))

    def value(self, obs, action):
        return self.critic(torch.cat([obs, action], dim=1))
