import torch
import torch.nn as nn

GAMMA = 0.99
torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 32), nn.ReLU(), nn.Linear(32, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
for episode in range(3):
    log_probs, rewards = [], []
    for t in range(6):
        dist = torch.distributions.Categorical(logits=policy(torch.randn(1, 4)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
        rewards.append(float(torch.rand(())))
    optimizer.zero_grad()
    ret = 0.0
    for log_prob, reward in zip(reversed(log_probs), reversed(rewards)):
        ret = reward + GAMMA * ret
        (-log_prob * ret).sum().backward()  # each step's graph, once
    optimizer.step()
    print(episode, ret)
