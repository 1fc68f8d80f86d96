import torch
import torch.nn as nn

torch.manual_seed(0)
policy = nn.Linear(4, 2)
critic = nn.Linear(4, 1)
optimizer = torch.optim.Adam([*policy.parameters(), *critic.parameters()], lr=1e-2)
for episode in range(2):
    memory = []
    for t in range(4):
        s = torch.randn(4)
        prob = torch.softmax(policy(s), dim=0)
        a = torch.distributions.Categorical(prob).sample()
        memory.append((critic(s).squeeze(), prob[a]))
    optimizer.zero_grad()
    R = 0
    for value, prob in memory[::-1]:
        R = value + 0.9 * R
        loss = -torch.log(prob) * R
        loss.backward()
    optimizer.step()
