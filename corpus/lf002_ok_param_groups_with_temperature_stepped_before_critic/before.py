import torch
import torch.nn as nn

actor = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 2))
critic = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
log_alpha = nn.Parameter(torch.zeros(1))  # the temperature, learned beside the actor
actor_opt = torch.optim.Adam(
    [{"params": actor.parameters()}, {"params": [log_alpha], "lr": 3e-3}], lr=1e-3
)
critic_opt = torch.optim.Adam(critic.parameters(), lr=1e-3)
for step in range(3):
    obs, act, next_obs = torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 4)
    reward = torch.randn(8, 1)
    with torch.no_grad():  # the critic's target: no graph through the actor or log_alpha
        next_act = torch.tanh(actor(next_obs))
        next_logp = -next_act.pow(2).sum(1, keepdim=True)
        next_q = critic(torch.cat([next_obs, next_act], 1))
        target = reward + 0.99 * (next_q - log_alpha.exp() * next_logp)
    critic_loss = (critic(torch.cat([obs, act], 1)) - target).pow(2).mean()
    new_act = torch.tanh(actor(obs))
    logp = -new_act.pow(2).sum(1, keepdim=True)
    actor_loss = (log_alpha.exp().detach() * logp - critic(torch.cat([obs, new_act], 1))).mean()
    actor_loss = actor_loss - (log_alpha * (logp.detach() + 2.0)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
    critic_opt.zero_grad()
    critic_loss.backward()  # through the critic and the data: nothing actor_opt changed
    critic_opt.step()
