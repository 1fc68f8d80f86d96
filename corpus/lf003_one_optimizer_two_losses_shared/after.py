import torch
import torch.nn as nn

torch.manual_seed(0)
features = nn.Sequential(nn.Linear(12, 24), nn.ReLU(), nn.Linear(24, 6))
classifier = nn.Linear(6, 4)
decoder = nn.Linear(6, 12)
optimizer = torch.optim.Adam([*features.parameters(), *classifier.parameters(), *decoder.parameters()])

for batch in range(3):
    x, y = torch.randn(9, 12), torch.randint(0, 4, (9,))
    h = features(x)
    reconstruction_loss = (decoder(h) - x).pow(2).mean()
    classification_loss = nn.functional.cross_entropy(classifier(h), y)
    optimizer.zero_grad()
    reconstruction_loss.backward(retain_graph=True)
    classification_loss.backward()
    optimizer.step()
