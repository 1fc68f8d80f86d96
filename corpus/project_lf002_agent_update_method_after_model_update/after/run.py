import torch

from agent import LatentAgent

if __name__ == "__main__":
    torch.manual_seed(8)
    agent = LatentAgent()
    for step in range(3):
        print(step, agent.learn(torch.randn(16, 6), torch.rand(16, 2), torch.randn(16, 1)))
