import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 16)

    def forward(self, x):
        h = self.fc(x)
        return torch.sigmoid(h)


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Dropout(0.1, inplace=True), nn.Linear(16, 6))

    def forward(self, z):
        return self.net(z)


class AE(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc, self.dec = Encoder(), Decoder()

    def forward(self, x):
        return self.dec(self.enc(x))


torch.manual_seed(0)
model = AE()
opt = torch.optim.Adam(model.parameters())
for step in range(3):
    x = torch.randn(8, 6)
    loss = F.mse_loss(model(x), x)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())
