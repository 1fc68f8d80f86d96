import torch

from td3 import TD3

torch.manual_seed(0)
agent = TD3(state_dim=3, action_dim=1)
for it in range(6):
    state, action = torch.randn(16, 3), torch.rand(16, 1) * 2 - 1
    agent.train(state, action, torch.randn(16, 1))
