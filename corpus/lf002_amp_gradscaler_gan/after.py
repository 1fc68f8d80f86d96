import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 6))
discriminator = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
opt_d = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
opt_g = torch.optim.Adam(generator.parameters(), lr=1e-3)
scaler = torch.amp.GradScaler("cpu", enabled=False)
bce = nn.BCEWithLogitsLoss()

for it in range(3):
    real, z = torch.randn(8, 6), torch.randn(8, 3)
    fake = generator(z)
    d_fake = discriminator(fake)
    loss_d = bce(discriminator(real), torch.ones(8, 1)) + bce(d_fake, torch.zeros(8, 1))
    opt_d.zero_grad()
    opt_g.zero_grad()
    scaler.scale(loss_d).backward(retain_graph=True, inputs=list(discriminator.parameters()))
    loss_g = bce(d_fake, torch.ones(8, 1))
    scaler.scale(loss_g).backward(inputs=list(generator.parameters()))
    scaler.step(opt_d)
    scaler.step(opt_g)
    scaler.update()
