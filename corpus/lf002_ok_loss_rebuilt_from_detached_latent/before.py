import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(12, 32), nn.ELU(), nn.Linear(32, 16))
decoder = nn.Linear(16, 12)
actor = nn.Sequential(nn.Linear(16, 32), nn.ELU(), nn.Linear(32, 2), nn.Tanh())
critic = nn.Sequential(nn.Linear(16 + 2, 32), nn.ELU(), nn.Linear(32, 1))
model_opt = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=6e-4)
actor_opt = torch.optim.Adam(actor.parameters(), lr=8e-5)
critic_opt = torch.optim.Adam(critic.parameters(), lr=8e-5)

for it in range(3):
    obs, returns = torch.randn(32, 12), torch.randn(32, 1)
    latent = encoder(obs)
    model_loss = nn.functional.mse_loss(decoder(latent), obs)
    model_opt.zero_grad()
    model_loss.backward()
    model_opt.step()

    state = latent.detach()
    action = actor(state)
    critic_loss = nn.functional.mse_loss(critic(torch.cat([state, action.detach()], 1)), returns)
    critic_opt.zero_grad()
    critic_loss.backward()
    critic_opt.step()
    actor_loss = -critic(torch.cat([state, action], 1)).mean()
    actor_opt.zero_grad()
    actor_loss.backward()
    actor_opt.step()
