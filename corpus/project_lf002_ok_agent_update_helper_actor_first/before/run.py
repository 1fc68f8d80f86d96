import torch

from agent import TwinCriticAgent

if __name__ == "__main__":
    torch.manual_seed(2)
    agent = TwinCriticAgent(obs_dim=7, act_dim=2)
    for step in range(4):
        obs, act = torch.randn(12, 7), torch.rand(12, 2) * 2 - 1
        print(step, agent.train_step(obs, act, torch.randn(12, 1)))
