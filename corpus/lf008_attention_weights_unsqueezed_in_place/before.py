import torch
import torch.nn as nn
import torch.nn.functional as F


class AttentionPooling(nn.Module):
    """Scores each time step, then pools the sequence with the softmax weights."""

    def __init__(self, features=10, hidden=16, labels=3):
        super().__init__()
        self.encoder = nn.GRU(features, hidden, batch_first=True)
        self.score = nn.Linear(hidden, 1)
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, sequence):
        states, _ = self.encoder(sequence)
        weights = torch.softmax(self.score(states).squeeze(-1), dim=1)
        weights.unsqueeze_(-1)
        pooled = (weights * states).sum(dim=1)
        return self.classifier(pooled)


torch.manual_seed(0)
model = AttentionPooling()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    sequence = torch.randn(5, 7, 10)
    labels = torch.randint(0, 3, (5,))
    loss = F.cross_entropy(model(sequence), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
