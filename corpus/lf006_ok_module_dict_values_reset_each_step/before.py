import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Linear(4, 8)
discriminators = nn.ModuleDict({"patch": nn.Linear(8, 1), "global": nn.Linear(8, 1)})
optimizers = [torch.optim.Adam(d.parameters(), lr=1e-3) for d in discriminators.values()]
bce = nn.BCEWithLogitsLoss()
for step in range(4):
    fake = generator(torch.randn(8, 4)).detach()
    d_log = 0
    for discriminator, optimizer in zip(discriminators.values(), optimizers):
        optimizer.zero_grad()
        real_loss = bce(discriminator(torch.randn(8, 8)), torch.ones(8, 1))
        loss = real_loss + bce(discriminator(fake), torch.zeros(8, 1))
        loss.backward()
        optimizer.step()
        d_log += loss
    print(f"step {step}: D {d_log.item():.4f}")
