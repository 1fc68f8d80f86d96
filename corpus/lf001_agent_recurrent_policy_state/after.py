import torch
import torch.nn as nn


class RecurrentPolicy(nn.Module):
    def __init__(self, obs_dim, n_actions, hidden=32):
        super().__init__()
        self.cell = nn.LSTMCell(obs_dim, hidden)
        self.pi = nn.Linear(hidden, n_actions)
        self.v = nn.Linear(hidden, 1)

    def forward(self, obs, state):
        hx, cx = self.cell(obs, state)
        return self.pi(hx), self.v(hx), (hx, cx)


class Agent:
    def __init__(self, obs_dim=5, n_actions=3, n_envs=4, lr=7e-4):
        self.policy = RecurrentPolicy(obs_dim, n_actions)
        self.optimizer = torch.optim.RMSprop(self.policy.parameters(), lr=lr)
        self.hx = torch.zeros(n_envs, 32)
        self.cx = torch.zeros(n_envs, 32)

    def update(self, rollout_obs, returns):
        values, log_probs = [], []
        for obs in rollout_obs:
            logits, value, (self.hx, self.cx) = self.policy(obs, (self.hx, self.cx))
            dist = torch.distributions.Categorical(logits=logits)
            log_probs.append(dist.log_prob(dist.sample()))
            values.append(value.squeeze(-1))
        advantage = returns - torch.stack(values)
        loss = advantage.pow(2).mean() - (advantage.detach() * torch.stack(log_probs)).mean()
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.policy.parameters(), 0.5)
        self.optimizer.step()


torch.manual_seed(0)
agent = Agent()
for update in range(3):
    agent.update(torch.randn(5, 4, 5), torch.randn(5, 4))
    agent.cx, agent.hx = agent.cx.detach(), agent.hx.detach()
