# Actor-critic whose target helper runs under torch.no_grad.
import torch
import torch.nn as nn

torch.manual_seed(0)
obs_dim, n_actions = 6, 3
gamma = 0.99
actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
actor_opt = torch.optim.Adam(actor.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)


@torch.no_grad()
def compute_target(critic, reward, next_state):
    return reward + gamma * critic(next_state)


for step in range(4):
    state = torch.randn(16, obs_dim)
    next_state = torch.randn(16, obs_dim)
    reward = torch.randn(16, 1)
    dist = torch.distributions.Categorical(logits=actor(state))
    action = dist.sample()
    log_prob = dist.log_prob(action).unsqueeze(1)

    value = critic(state)
    target = compute_target(critic, reward, next_state)
    advantage = target - value

    critic_loss = advantage.pow(2).mean()
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()

    actor_loss = -(log_prob * advantage.detach()).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    print(step, critic_loss.item(), actor_loss.item())
