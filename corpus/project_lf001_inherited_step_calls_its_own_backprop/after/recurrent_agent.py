import torch
import torch.nn as nn
import torch.nn.functional as F

from base_agent import BaseAgent


class RecurrentQNetwork(nn.Module):
    def __init__(self, observations=6, hidden_size=32, actions=3):
        super().__init__()
        self.cell = nn.GRUCell(observations, hidden_size)
        self.q_values = nn.Linear(hidden_size, actions)

    def forward(self, observation, hidden):
        hidden = self.cell(observation, hidden)
        return self.q_values(hidden), hidden


class RecurrentAgent(BaseAgent):
    def __init__(self):
        super().__init__()
        self.network = RecurrentQNetwork()
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=1e-3)

    def run_episode(self, length=12):
        hidden = torch.zeros(1, 32)
        for _ in range(length):
            observation = torch.randn(1, 6)
            q_values, hidden = self.network(observation, hidden)
            hidden = hidden.detach()
            loss = F.smooth_l1_loss(q_values, torch.randn(1, 3))
            self.take_optimisation_step(self.optimizer, loss)
        return loss.item()


if __name__ == "__main__":
    torch.manual_seed(0)
    print(RecurrentAgent().run_episode())
