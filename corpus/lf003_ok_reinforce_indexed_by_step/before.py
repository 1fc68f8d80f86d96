import torch
import torch.nn as nn


class Agent:
    def __init__(self):
        self.policy = nn.Sequential(nn.Linear(4, 32), nn.Tanh(), nn.Linear(32, 2))
        self.optimizer = torch.optim.SGD(self.policy.parameters(), lr=1e-2)
        self.log_probs, self.rewards = [], []

    def act(self, state):
        dist = torch.distributions.Categorical(logits=self.policy(state))
        action = dist.sample()
        self.log_probs.append(dist.log_prob(action))
        return action

    def finish_episode(self):
        self.optimizer.zero_grad()
        for t in reversed(range(len(self.rewards))):
            (-self.log_probs[t] * self.rewards[t]).backward()
        self.optimizer.step()
        self.log_probs, self.rewards = [], []


torch.manual_seed(0)
agent = Agent()
for episode in range(3):
    for t in range(5):
        agent.act(torch.randn(4))
        agent.rewards.append(1.0 if t % 2 else -0.5)
    agent.finish_episode()
    print(episode)
