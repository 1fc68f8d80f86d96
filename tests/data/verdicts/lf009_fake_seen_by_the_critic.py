import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
discriminator = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optimizer_g = torch.optim.Adam(generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizer_d = torch.optim.Adam(discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
bce = nn.BCEWithLogitsLoss()
data = [torch.randn(6, 8) for _ in range(4)]
DETACH_FAKE = bool(0)  # a call: which branch runs, only running it tells

for real in data:
    ones, zeros = torch.ones(real.size(0), 1), torch.zeros(real.size(0), 1)
    optimizer_d.zero_grad()
    optimizer_g.zero_grad()
    fake = generator(torch.randn(real.size(0), 4))
    seen = fake.detach() if DETACH_FAKE else fake
    d_loss = bce(discriminator(real), ones) + bce(discriminator(seen), zeros)
    d_loss.backward(retain_graph=True)
    optimizer_d.step()
    g_loss = bce(discriminator(fake), ones)
    g_loss.backward()
    optimizer_g.step()
