import torch
import torch.nn as nn


def update(optimizer, loss, retain=False):
    optimizer.zero_grad()
    loss.backward(retain_graph=retain)
    optimizer.step()


torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(10, 24), nn.Tanh(), nn.Linear(24, 24), nn.Tanh())
policy_head = nn.Linear(24, 4)
value_head = nn.Linear(24, 1)
policy_optimizer = torch.optim.Adam([*encoder.parameters(), *policy_head.parameters()], lr=3e-4)
value_optimizer = torch.optim.Adam([*encoder.parameters(), *value_head.parameters()], lr=1e-3)

for it in range(3):
    obs, returns = torch.randn(16, 10), torch.randn(16)
    actions = torch.randint(0, 4, (16,))
    features = encoder(obs)
    values = value_head(features).squeeze(-1)
    log_probs = torch.log_softmax(policy_head(features), -1).gather(1, actions[:, None]).squeeze(1)
    policy_loss = -(log_probs * (returns - values.detach())).mean()
    value_loss = (returns - values).pow(2).mean()
    update(policy_optimizer, policy_loss, retain=True)
    features = encoder(obs)
    values = value_head(features).squeeze(-1)
    value_loss = (returns - values).pow(2).mean()
    update(value_optimizer, value_loss)
