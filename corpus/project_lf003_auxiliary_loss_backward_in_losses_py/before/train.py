import torch
import torch.nn as nn

from losses import diversity_loss

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
features = nn.Sequential(nn.Linear(8, 12), nn.Tanh(), nn.Linear(12, 6))
head = nn.Linear(6, 1)
optimizer = torch.optim.Adam(generator.parameters(), lr=1e-3)

for step in range(3):
    optimizer.zero_grad()
    phi = features(generator(torch.randn(8, 4)))
    adversarial = -head(phi).mean()
    adversarial.backward()
    diversity = diversity_loss(phi, backward=True)
    optimizer.step()
    print(f"step {step}: adversarial {adversarial.item():.4f} diversity {diversity:.4f}")
