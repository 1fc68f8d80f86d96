import torch
import torch.nn as nn


def update(optimizer, loss, retain=False):
    optimizer.zero_grad()
    loss.backward(retain_graph=retain)
    optimizer.step()


torch.manual_seed(0)
actor = nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 4))
critic = nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 1))
policy_optimizer = torch.optim.Adam(actor.parameters(), lr=3e-4)
value_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)

for it in range(3):
    obs, returns = torch.randn(16, 10), torch.randn(16)
    actions = torch.randint(0, 4, (16,))
    values = critic(obs).squeeze(-1)
    log_probs = torch.log_softmax(actor(obs), -1).gather(1, actions[:, None]).squeeze(1)
    policy_loss = -(log_probs * (returns - values.detach())).mean()
    value_loss = (returns - values).pow(2).mean()
    update(policy_optimizer, policy_loss)
    update(value_optimizer, value_loss)
