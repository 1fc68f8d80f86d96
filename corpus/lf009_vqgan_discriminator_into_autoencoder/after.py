import torch
import torch.nn as nn
import torch.nn.functional as F


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Linear(12, 4)
        self.decoder = nn.Linear(4, 12)

    def forward(self, x):
        return self.decoder(torch.tanh(self.encoder(x)))


torch.manual_seed(0)
vq = AutoEncoder()
disc = nn.Sequential(nn.Linear(12, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_vq = torch.optim.Adam(vq.parameters(), lr=1e-3)
opt_disc = torch.optim.Adam(disc.parameters(), lr=1e-3)

for step in range(4):
    images = torch.randn(5, 12)
    decoded = vq(images)
    rec_loss = F.mse_loss(decoded, images)
    g_loss = -disc(decoded).mean()
    vq_loss = rec_loss + 0.1 * g_loss
    d_loss = F.relu(1.0 - disc(images)).mean() + F.relu(1.0 + disc(decoded)).mean()

    opt_vq.zero_grad()
    vq_loss.backward(retain_graph=True)
    opt_disc.zero_grad()
    d_loss.backward(inputs=[p for group in opt_disc.param_groups for p in group["params"]])
    opt_vq.step()
    opt_disc.step()
