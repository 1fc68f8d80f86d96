import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self, num_inputs, num_actions):
        super().__init__()
        self.body = nn.Linear(num_inputs, 16)
        self.actor = nn.Linear(16, num_actions)
        self.critic = nn.Linear(16, 1)

    def forward(self, x):
        x = F.relu(self.body(x))
        return self.actor(x), self.critic(x)
