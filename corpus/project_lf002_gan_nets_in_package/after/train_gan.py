import torch

from gan import Critic, Generator

torch.manual_seed(0)
generator, critic = Generator(), Critic()
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3, betas=(0.5, 0.999))
opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.999))
for step in range(4):
    real = torch.randn(16, 8)
    fake = generator(torch.randn(16, 6))
    score_fake = critic(fake).mean()
    critic_loss = score_fake - critic(real).mean()
    opt_c.zero_grad()
    opt_g.zero_grad()
    critic_loss.backward(retain_graph=True, inputs=list(critic.parameters()))
    gen_loss = -score_fake
    gen_loss.backward(inputs=list(generator.parameters()))
    opt_c.step()
    opt_g.step()
