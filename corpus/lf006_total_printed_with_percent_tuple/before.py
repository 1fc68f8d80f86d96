import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
for epoch in range(2):
    epoch_loss = 0.0
    for i in range(5):
        inputs, labels = torch.randn(16, 10), torch.randint(0, 4, (16,))
        optimizer.zero_grad()
        loss = criterion(net(inputs), labels)
        loss.backward()
        optimizer.step()
        epoch_loss += loss
    print("[%d] loss: %.3f" % (epoch + 1, epoch_loss / 5))
