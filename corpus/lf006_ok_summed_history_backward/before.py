# Several augmented views of one batch, each loss kept in a list; sum(view_losses) is the loss
# backpropagated for the step.
import torch
import torch.nn as nn

torch.manual_seed(0)
classifier = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
optimizer = torch.optim.Adam(classifier.parameters(), lr=1e-3)

for step in range(3):
    images, labels = torch.randn(4, 8), torch.randint(0, 3, (4,))
    view_losses = []
    for view in range(3):
        noisy = images + 0.1 * torch.randn_like(images)
        view_losses.append(nn.functional.cross_entropy(classifier(noisy), labels))
    optimizer.zero_grad()
    sum(view_losses).backward()
    optimizer.step()
