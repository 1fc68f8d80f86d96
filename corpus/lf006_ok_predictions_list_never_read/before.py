import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 5))
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)


def test_episodes(episodes):
    net.eval()
    accs = []
    for support, query, labels in episodes:
        preds = []
        correct = 0
        for chunk, chunk_labels in zip(query.chunk(3), labels.chunk(3)):
            pred = net(chunk + support.mean(0))
            preds.append(pred)
            correct += (pred.argmax(1) == chunk_labels).sum().item()
        accs.append(correct / len(labels))
    print("accuracy %.3f" % (sum(accs) / len(accs)))
    net.train()


episodes = [(torch.randn(5, 6), torch.randn(15, 6), torch.randint(0, 5, (15,))) for _ in range(2)]
for step in range(3):
    x, y = torch.randn(10, 6), torch.randint(0, 5, (10,))
    loss = nn.functional.cross_entropy(net(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    test_episodes(episodes)
