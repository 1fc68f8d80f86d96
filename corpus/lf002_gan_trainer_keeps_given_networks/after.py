import torch
import torch.nn as nn


class AdversarialTrainer:
    def __init__(self, generator, critic, lr=2e-4):
        self.generator, self.critic = generator, critic
        self.gen_opt = torch.optim.Adam(generator.parameters(), lr=lr, betas=(0.5, 0.999))
        self.critic_opt = torch.optim.Adam(critic.parameters(), lr=lr, betas=(0.5, 0.999))

    def train_step(self, real, noise):
        fake = self.generator(noise)
        fake_score = self.critic(fake)
        critic_loss = fake_score.mean() - self.critic(real).mean()
        self.critic_opt.zero_grad()
        self.gen_opt.zero_grad()
        critic_loss.backward(retain_graph=True, inputs=list(self.critic.parameters()))

        gen_loss = -fake_score.mean()
        gen_loss.backward(inputs=list(self.generator.parameters()))
        self.critic_opt.step()
        self.gen_opt.step()
        return critic_loss.item(), gen_loss.item()


torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 6))
critic = nn.Sequential(nn.Linear(6, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
trainer = AdversarialTrainer(generator, critic)
for step in range(3):
    print(trainer.train_step(torch.randn(8, 6), torch.randn(8, 4)))
