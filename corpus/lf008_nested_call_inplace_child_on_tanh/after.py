import torch
import torch.nn as nn
import torch.nn.functional as F


class Critic(nn.Module):
    """A value head: tanh features, an in-place LeakyReLU, the readout, all in one expression."""

    def __init__(self, observations=6, hidden=24):
        super().__init__()
        self.trunk = nn.Linear(observations, hidden)
        self.act = nn.LeakyReLU(0.01, inplace=False)
        self.value = nn.Linear(hidden, 1)

    def forward(self, observation):
        features = self.trunk(observation)
        return self.value(self.act(torch.tanh(features))).squeeze(-1)


torch.manual_seed(0)
critic = Critic()
optimizer = torch.optim.RMSprop(critic.parameters(), lr=1e-3)
for step in range(3):
    observation, returns = torch.randn(10, 6), torch.randn(10)
    loss = F.smooth_l1_loss(critic(observation), returns)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
