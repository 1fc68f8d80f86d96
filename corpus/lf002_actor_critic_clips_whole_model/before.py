import torch
import torch.nn as nn
import torch.nn.functional as F


class ActorCritic(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16), nn.Tanh())
        self.actor = nn.Linear(16, 2)
        self.critic = nn.Linear(16, 1)

    def forward(self, obs):
        h = self.trunk(obs)
        return self.actor(h), self.critic(h)


torch.manual_seed(0)
net = ActorCritic()
critic_opt = torch.optim.SGD(list(net.trunk.parameters()) + list(net.critic.parameters()), 0.1)
actor_opt = torch.optim.SGD(net.actor.parameters(), 0.1)
for step in range(4):
    obs, act, ret = torch.randn(16, 4), torch.randint(0, 2, (16,)), torch.randn(16)
    logits, value = net(obs)
    critic_loss = F.mse_loss(value.squeeze(-1), ret)
    critic_opt.zero_grad()
    critic_loss.backward(retain_graph=True)
    torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
    critic_opt.step()
    adv = (ret - value.squeeze(-1)).detach()
    actor_loss = -(torch.distributions.Categorical(logits=logits).log_prob(act) * adv).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
    actor_opt.step()
