import torch
import torch.nn as nn
import torch.optim as optim

torch.manual_seed(0)
device = torch.device("cpu")
generator = nn.Sequential(nn.Linear(6, 6), nn.Tanh()).to(device)
discriminator = nn.Linear(6, 1).to(device).train()
opt_g = optim.Adam(generator.parameters(), lr=2e-4)
opt_d = optim.Adam(discriminator.parameters(), lr=2e-4)
mse = nn.MSELoss()

for it in range(5):
    noise = torch.randn(16, 6, device=device)
    real = torch.randn(16, 6, device=device)
    fake = generator(noise)
    discriminator.zero_grad()
    generator.zero_grad()
    score_real = discriminator(real).mean()
    score_fake = discriminator(fake).mean()
    loss_d = score_fake - score_real
    loss_d.backward(retain_graph=True, inputs=list(discriminator.parameters()))
    loss_g = mse(fake, real) - score_fake
    loss_g.backward(inputs=list(generator.parameters()))
    opt_d.step()
    opt_g.step()
