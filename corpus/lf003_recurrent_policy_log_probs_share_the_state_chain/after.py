import torch
import torch.nn as nn

torch.manual_seed(0)
cell = nn.GRUCell(4, 16)
head = nn.Linear(16, 2)
optimizer = torch.optim.Adam([*cell.parameters(), *head.parameters()], lr=1e-3)
for episode in range(3):
    h = torch.zeros(1, 16)
    log_probs, rewards = [], []
    for t in range(5):
        h = cell(torch.randn(1, 4), h)  # the state chains every step
        dist = torch.distributions.Categorical(logits=head(h))
        a = dist.sample()
        log_probs.append(dist.log_prob(a))
        rewards.append(float(torch.rand(())))
    optimizer.zero_grad()
    R = 0
    for logp, r in zip(reversed(log_probs), reversed(rewards)):
        R = r + 0.99 * R
        (-logp * R).sum().backward(retain_graph=True)
    optimizer.step()
    print(episode)
