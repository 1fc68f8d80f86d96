# Actor-critic with a loss dict, written carefully.
import torch
import torch.nn as nn

torch.manual_seed(0)
obs_dim, n_actions = 6, 3
actor = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, n_actions))
critic = nn.Sequential(nn.Linear(obs_dim, 32), nn.Tanh(), nn.Linear(32, 1))
actor_opt = torch.optim.RMSprop(actor.parameters(), lr=7e-4)
critic_opt = torch.optim.RMSprop(critic.parameters(), lr=7e-4)


class A2CLoss(nn.Module):
    def __init__(self, value_coef=0.5, entropy_coef=0.01):
        super().__init__()
        self.value_coef = value_coef
        self.entropy_coef = entropy_coef

    def forward(self, logits, values, actions, returns):
        dist = torch.distributions.Categorical(logits=logits)
        advantage = returns - values.squeeze(1)
        actor_loss = -(dist.log_prob(actions) * advantage.detach()).mean() - self.entropy_coef * dist.entropy().mean()
        critic_loss = self.value_coef * advantage.pow(2).mean()
        return {"actor": actor_loss, "critic": critic_loss}


loss_fn = A2CLoss()

for update in range(4):
    states = torch.randn(20, obs_dim)
    returns = torch.randn(20)
    logits = actor(states)
    values = critic(states)
    actions = torch.distributions.Categorical(logits=logits).sample()

    losses = loss_fn(logits, values, actions, returns)
    critic_opt.zero_grad()
    losses["critic"].backward()
    critic_opt.step()
    actor_opt.zero_grad()
    losses["actor"].backward()
    actor_opt.step()
    print(update, {k: v.item() for k, v in losses.items()})
