import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
OBS, ACT, GAMMA, TAU = 4, 2, 0.99, 0.005


class QNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(OBS + ACT, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, state, action):
        return self.net(torch.cat([state, action], dim=1))


class GaussianPolicy(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(OBS, 32), nn.ReLU())
        self.mean, self.log_std = nn.Linear(32, ACT), nn.Linear(32, ACT)

    def sample(self, state):
        h = self.body(state)
        std = self.log_std(h).clamp(-20, 2).exp()
        normal = torch.distributions.Normal(self.mean(h), std)
        x = normal.rsample()
        action = torch.tanh(x)
        log_prob = normal.log_prob(x) - torch.log(1 - action.pow(2) + 1e-6)
        return action, log_prob.sum(1, keepdim=True)


class SAC:
    def __init__(self):
        self.critic, self.critic_target = QNetwork(), QNetwork()
        self.critic_target.load_state_dict(self.critic.state_dict())
        self.policy = GaussianPolicy()
        self.critic_optim = torch.optim.Adam(self.critic.parameters(), lr=3e-4)
        self.policy_optim = torch.optim.Adam(self.policy.parameters(), lr=3e-4)
        self.target_entropy = -float(ACT)
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=3e-4)

    def update_parameters(self, state, action, reward, next_state):
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad():
            next_action, next_log_pi = self.policy.sample(next_state)
            next_q = self.critic_target(next_state, next_action) - alpha * next_log_pi
            target_q = reward + GAMMA * next_q
        qf_loss = F.mse_loss(self.critic(state, action), target_q)
        pi, log_pi = self.policy.sample(state)
        policy_loss = (alpha * log_pi - self.critic(state, pi)).mean()

        self.critic_optim.zero_grad()
        qf_loss.backward()
        self.critic_optim.step()

        self.policy_optim.zero_grad()
        policy_loss.backward()
        self.policy_optim.step()

        alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
        self.alpha_optim.zero_grad()
        alpha_loss.backward()
        self.alpha_optim.step()

        with torch.no_grad():
            for target, param in zip(self.critic_target.parameters(), self.critic.parameters()):
                target.data.copy_(target.data * (1.0 - TAU) + param.data * TAU)
        return qf_loss.item(), policy_loss.item()


agent = SAC()
for step in range(3):
    batch = torch.randn(16, OBS), torch.rand(16, ACT) * 2 - 1, torch.randn(16, 1)
    print(step, agent.update_parameters(*batch, torch.randn(16, OBS)))
