import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
for episode in range(3):
    memory = []
    for t in range(5):
        dist = torch.distributions.Categorical(logits=policy(torch.randn(4)))
        action = dist.sample()
        reward = float(action == 1)
        memory.insert(0, [reward, dist.log_prob(action)])  # newest first: returns walk forward
    optimizer.zero_grad()
    ret = 0.0
    for reward, log_prob in memory:
        ret = reward + 0.9 * ret
        (-log_prob * ret).backward()
    optimizer.step()
    print(episode, ret)
