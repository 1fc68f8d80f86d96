import torch

from actor_critic import ActorCriticAgent

if __name__ == "__main__":
    torch.manual_seed(6)
    agent = ActorCriticAgent()
    for step in range(3):
        print(step, agent.learn(torch.randn(10, 3), torch.rand(10, 2), torch.randn(10, 1)))
