import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for episode in range(3):
    log_probs = []
    for t in range(5):
        dist = torch.distributions.Categorical(logits=policy(torch.randn(4)))
        action = dist.sample()
        log_probs.append(dist.log_prob(action))
    returns = torch.randn(5)
    loss = -(torch.stack(log_probs) * returns).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
