import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 4))
decoder = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 16))
encoder_optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for step in range(3):
    x = torch.randn(10, 16)
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    loss = (decoder(encoder(x)) - x).pow(2).mean()
    loss.backward()
    encoder_optimizer.step()
    decoder_optimizer.step()
