import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))
D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)
loss_fn = nn.BCEWithLogitsLoss()
for step in range(4):
    real, fake = torch.randn(6, 4), G(torch.randn(6, 2))
    opt_D.zero_grad()
    d_loss = loss_fn(D(real), torch.ones(6, 1)) + loss_fn(D(fake.detach()), torch.zeros(6, 1))
    d_loss.backward()
    opt_D.step()
    opt_G.zero_grad()
    g_loss = loss_fn(D(fake), torch.ones(6, 1))
    g_loss.backward()
    opt_G.step()
