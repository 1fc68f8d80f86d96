import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(6, 12), nn.ReLU(), nn.Linear(12, 4))
classifier = nn.Linear(4, 2)
optimizers = {
    "encoder": torch.optim.Adam(encoder.parameters(), lr=1e-3),
    "classifier": torch.optim.Adam(classifier.parameters(), lr=1e-3),
}
for step in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    z = encoder(x)
    contrastive = (z @ z.T).pow(2).mean()
    ce = nn.functional.cross_entropy(classifier(z), y)
    optimizers["encoder"].zero_grad()
    contrastive.backward()
    optimizers["encoder"].step()
    optimizers["classifier"].zero_grad()
    ce.backward()
    optimizers["classifier"].step()
