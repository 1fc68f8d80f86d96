# encoder/decoder with separate optimizers and per-network clipping; then an encoder-only regulariser
import torch, torch.nn as nn, torch.nn.functional as F
torch.manual_seed(0)
enc = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
dec = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
enc_opt = torch.optim.Adam(enc.parameters(), lr=1e-3)
dec_opt = torch.optim.Adam(dec.parameters(), lr=1e-3)
for it in range(3):
    x = torch.randn(8, 8)
    enc_opt.zero_grad()
    dec_opt.zero_grad()
    z = enc(x)
    rec = F.mse_loss(dec(z), x)
    rec.backward()
    torch.nn.utils.clip_grad_norm_(dec.parameters(), 1.0)
    dec_opt.step()
    # encoder: reconstruction + latent regulariser, accumulated
    reg = 1e-3 * enc(x).pow(2).mean()
    reg.backward()
    torch.nn.utils.clip_grad_norm_(enc.parameters(), 1.0)
    enc_opt.step()
print("ok")
