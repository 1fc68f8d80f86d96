import torch
import torch.nn as nn


def mlp(inp, out):
    return nn.Sequential(nn.Linear(inp, 32), nn.ReLU(), nn.Linear(32, out))


class SACTrainer:
    def __init__(self, policy, qf1, qf2, optimizer_class=torch.optim.Adam, policy_lr=3e-4, qf_lr=3e-4):
        self.policy = policy
        self.qf1 = qf1
        self.qf2 = qf2
        self.policy_optimizer = optimizer_class(self.policy.parameters(), lr=policy_lr)
        self.qf1_optimizer = optimizer_class(self.qf1.parameters(), lr=qf_lr)
        self.qf2_optimizer = optimizer_class(self.qf2.parameters(), lr=qf_lr)

    def train_from_torch(self, obs, actions, q_target):
        new_actions = torch.tanh(self.policy(obs))
        sa_new = torch.cat([obs, new_actions], dim=1)
        q_new = torch.min(self.qf1(sa_new), self.qf2(sa_new))
        policy_loss = (0.1 * new_actions.pow(2).sum(1, keepdim=True) - q_new).mean()

        sa = torch.cat([obs, actions], dim=1)
        qf1_loss = (self.qf1(sa) - q_target).pow(2).mean()
        qf2_loss = (self.qf2(sa) - q_target).pow(2).mean()
        self.qf1_optimizer.zero_grad()
        qf1_loss.backward()
        self.qf1_optimizer.step()
        self.qf2_optimizer.zero_grad()
        qf2_loss.backward()
        self.qf2_optimizer.step()

        self.policy_optimizer.zero_grad()
        policy_loss.backward()
        self.policy_optimizer.step()


torch.manual_seed(0)
obs_dim, act_dim = 6, 2
policy = mlp(obs_dim, act_dim)
qf1, qf2 = mlp(obs_dim + act_dim, 1), mlp(obs_dim + act_dim, 1)
trainer = SACTrainer(policy, qf1, qf2)
for step in range(3):
    obs, actions = torch.randn(32, obs_dim), torch.randn(32, act_dim)
    trainer.train_from_torch(obs, actions, torch.randn(32, 1))
