import torch
import torch.nn as nn
import torch.nn.functional as F


class Accelerator:
    def prepare(self, *objs):
        return objs

    def backward(self, loss, **kwargs):
        loss.backward(**kwargs)


torch.manual_seed(0)
accelerator = Accelerator()
encoder = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32))
projector = nn.Linear(32, 32)
classifier = nn.Linear(32, 4)
optimizer = torch.optim.AdamW([*encoder.parameters(), *projector.parameters(), *classifier.parameters()], lr=1e-3)
encoder, projector, classifier, optimizer = accelerator.prepare(encoder, projector, classifier, optimizer)

for step in range(3):
    x, labels = torch.randn(8, 16), torch.randint(0, 4, (8,))
    feats = encoder(x)
    z1 = F.normalize(projector(feats + 0.1 * torch.randn_like(feats)), dim=1)
    z2 = F.normalize(projector(feats), dim=1)
    contrastive = F.cross_entropy(z1 @ z2.t() / 0.1, torch.arange(8))
    aux = F.cross_entropy(classifier(feats), labels)
    accelerator.backward(contrastive, retain_graph=True)
    accelerator.backward(0.5 * aux)
    optimizer.step()
    optimizer.zero_grad()
