import torch
import torch.nn as nn


class MaskedAttention(nn.Module):
    """Self-attention that zeroes the weights of padded keys after the softmax."""

    def __init__(self, dim):
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.scale = dim**-0.5

    def _drop_padding(self, attn, pad):
        attn.masked_fill_(pad[:, None, :], 0.0)
        return attn

    def forward(self, x, pad):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        attn = torch.softmax(q @ k.transpose(1, 2) * self.scale, dim=-1)
        attn = self._drop_padding(pad=pad, attn=attn)
        return self.proj(attn @ v)


torch.manual_seed(0)
layer = MaskedAttention(8)
head = nn.Linear(8, 1)
optimizer = torch.optim.Adam([*layer.parameters(), *head.parameters()], lr=1e-3)
for step in range(3):
    x = torch.randn(2, 5, 8)
    pad = torch.zeros(2, 5, dtype=torch.bool)
    pad[:, -1] = True
    loss = head(layer(x, pad)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
