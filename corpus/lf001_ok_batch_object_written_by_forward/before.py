import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class GraphBatch:
    """A batch of graphs whose node features live in a dict (DGL's `g.ndata`)."""

    def __init__(self, features):
        self.ndata = {"feat": features}


def collate(samples):
    features = torch.cat([f for f, _ in samples])
    return GraphBatch(features), torch.tensor([label for _, label in samples])


class GraphNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(1, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, graph, features):
        graph.ndata["h"] = torch.relu(self.embed(features))  # written into the batch object
        return self.out(graph.ndata["h"].mean(0, keepdim=True))


torch.manual_seed(0)
dataset = [(torch.rand(n, 1), n % 3) for n in (4, 5, 6, 7)]
loader = DataLoader(dataset, batch_size=1, shuffle=True, collate_fn=collate)
model = GraphNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    for batch_graphs, labels in loader:
        batch_x = batch_graphs.ndata["feat"]
        loss = criterion(model(batch_graphs, batch_x), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
