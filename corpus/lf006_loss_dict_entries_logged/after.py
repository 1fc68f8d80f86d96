import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(8, 16), nn.Tanh())
discriminator = nn.Sequential(nn.Linear(16, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for epoch in range(2):
    epoch_losses = {"G": 0.0, "D": 0.0}
    batches = 0
    for step in range(4):
        real = torch.randn(4, 16)
        fake = generator(torch.randn(4, 8))
        opt_d.zero_grad()
        loss_d = bce(discriminator(real), torch.ones(4, 1)) + bce(
            discriminator(fake.detach()), torch.zeros(4, 1)
        )
        loss_d.backward()
        opt_d.step()
        opt_g.zero_grad()
        loss_g = bce(discriminator(fake), torch.ones(4, 1))
        loss_g.backward()
        opt_g.step()
        epoch_losses["D"] += loss_d.detach()
        epoch_losses["G"] += loss_g.detach()
        batches += 1
    print(f"epoch {epoch}: D {epoch_losses['D'] / batches:.3f} G {epoch_losses['G'] / batches:.3f}")
