import torch
from torch import nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 8))
dynamics = nn.Sequential(nn.Linear(8 + 2, 16), nn.Tanh(), nn.Linear(16, 8))
actor = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 2), nn.Tanh())
value = nn.Linear(8, 1)
opt_model = torch.optim.Adam([*encoder.parameters(), *dynamics.parameters()], lr=1e-3)
opt_actor = torch.optim.Adam(actor.parameters(), lr=1e-3)


def update(optimizer, loss, retain=False):
    optimizer.zero_grad()
    loss.backward(retain_graph=retain)
    optimizer.step()


for step in range(4):
    obs, actions, next_obs = torch.randn(16, 6), torch.randn(16, 2), torch.randn(16, 6)
    latent = encoder(obs)
    predicted = dynamics(torch.cat([latent, actions], -1))
    model_loss = (predicted - encoder(next_obs).detach()).pow(2).mean()
    update(opt_model, model_loss, retain=True)
    # imagination: roll the learned dynamics forward from the posterior latents
    state = latent
    for _ in range(3):
        state = dynamics(torch.cat([state, actor(state)], -1))
    actor_loss = -value(state).mean()
    update(opt_actor, actor_loss)
