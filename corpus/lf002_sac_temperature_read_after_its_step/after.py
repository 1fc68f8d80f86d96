# SAC with a learned temperature (`Adam([log_alpha])`, as TianhongDai's and pranz24's agents
# build it): alpha is read from log_alpha right after the temperature's step, and the policy
# loss goes through the critic, which steps before the policy's backward.
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
policy = nn.Linear(2, 2)
log_alpha = torch.zeros(1, requires_grad=True)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
policy_optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
alpha_optimizer = torch.optim.Adam([log_alpha], lr=1e-2)

for step in range(3):
    obs = torch.randn(16, 2)
    action = torch.tanh(policy(obs))
    alpha_loss = -(log_alpha * action.detach().sum(1)).mean()
    alpha_optimizer.zero_grad()
    alpha_loss.backward()
    alpha_optimizer.step()
    alpha = log_alpha.exp()  # the temperature as its step left it
    q_new = critic(torch.cat([obs[:, :1], action], 1))
    policy_loss = (alpha * action.pow(2).sum(1, keepdim=True) - q_new).mean()
    q = critic(torch.cat([obs[:, :1], action.detach()], 1))
    critic_loss = (q - alpha.detach()).pow(2).mean()
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    policy_optimizer.zero_grad()
    q_new = critic(torch.cat([obs[:, :1], action], 1))
    policy_loss = (alpha * action.pow(2).sum(1, keepdim=True) - q_new).mean()
    policy_loss.backward()
    policy_optimizer.step()
