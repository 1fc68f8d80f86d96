import torch
import torch.nn as nn

from agent import Agent
from trainer import Trainer


def main():
    torch.manual_seed(0)
    actor = nn.Sequential(nn.Linear(6, 32), nn.ReLU(), nn.Linear(32, 2))
    critic = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1))
    agent = Agent(actor, critic)
    actor_optimizer = torch.optim.Adam(actor.parameters(), lr=1e-3)
    critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
    Trainer(agent, actor_optimizer, critic_optimizer).fit(3)


if __name__ == "__main__":
    main()
