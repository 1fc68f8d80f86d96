import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
discriminator = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
optimizer = torch.optim.Adam(
    list(generator.parameters()) + list(discriminator.parameters()), lr=2e-4
)
criterion = nn.BCEWithLogitsLoss()

for step in range(5):
    real = torch.randn(32, 16)
    fake = generator(torch.randn(32, 8))

    # the discriminator's update: the generator's gradients are None after zero_grad(),
    # so this step leaves the generator's weights untouched
    optimizer.zero_grad()
    d_real = discriminator(real)
    d_fake = discriminator(fake.detach())
    d_loss = criterion(d_real, torch.ones_like(d_real)) + criterion(
        d_fake, torch.zeros_like(d_fake)
    )
    d_loss.backward()
    optimizer.step()

    # the generator's update goes back through `fake`, built before that step
    optimizer.zero_grad()
    g_out = discriminator(fake)
    g_loss = criterion(g_out, torch.ones_like(g_out))
    g_loss.backward()
    optimizer.step()
    print(f"step {step}: d_loss={d_loss.item():.3f} g_loss={g_loss.item():.3f}")
