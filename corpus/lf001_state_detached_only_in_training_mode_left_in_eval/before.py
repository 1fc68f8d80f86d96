import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 8)
        self.fc = nn.Linear(8, 4)

    def forward(self, x, h):
        if self.training:
            h = h.detach()
        o, h = self.rnn(x, h)
        return self.fc(o), h


net = Net()
opt = torch.optim.SGD(net.parameters(), 0.1)
data = torch.randn(61, 2, 4)
for epoch in range(2):
    net.eval()
    with torch.no_grad():  # validation loss before the epoch's training
        out, _ = net(data[:10], torch.zeros(1, 2, 8))
        print(f"epoch {epoch}: validation {(out - data[1:11]).pow(2).mean():.4f}")
    # (no net.train(): the network is still in eval mode)
    h = torch.zeros(1, 2, 8)
    for i in range(0, 50, 10):
        out, h = net(data[i : i + 10], h)
        loss = ((out - data[i + 1 : i + 11]) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
