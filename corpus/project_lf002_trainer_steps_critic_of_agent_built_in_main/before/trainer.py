import torch


class Trainer:
    def __init__(self, agent, actor_optimizer, critic_optimizer):
        self.agent = agent
        self.actor_optimizer = actor_optimizer
        self.critic_optimizer = critic_optimizer

    def fit(self, steps):
        agent = self.agent
        for step in range(steps):
            obs = torch.randn(16, 6)
            reward = torch.randn(16, 1)
            q = agent.value(obs, agent.act(obs))
            critic_loss = (q - reward).pow(2).mean()
            actor_loss = -q.mean()
            self.critic_optimizer.zero_grad()
            critic_loss.backward(retain_graph=True)
            self.critic_optimizer.step()
            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            self.actor_optimizer.step()
