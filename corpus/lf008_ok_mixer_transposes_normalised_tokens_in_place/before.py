import torch
import torch.nn as nn
import torch.nn.functional as F


class MixerLayer(nn.Module):
    """MLP-Mixer: mix across tokens on the transposed, normalised input, then across channels."""

    def __init__(self, tokens=9, channels=12, expansion=2):
        super().__init__()
        self.token_norm = nn.LayerNorm(channels)
        self.token_mlp = nn.Sequential(
            nn.Linear(tokens, tokens * expansion),
            nn.GELU(),
            nn.Linear(tokens * expansion, tokens),
        )
        self.channel_norm = nn.LayerNorm(channels)
        self.channel_mlp = nn.Sequential(
            nn.Linear(channels, channels * expansion),
            nn.GELU(),
            nn.Linear(channels * expansion, channels),
        )

    def forward(self, x):
        mixed = self.token_norm(x)
        mixed.transpose_(1, 2)
        mixed = self.token_mlp(mixed)
        mixed.transpose_(1, 2)
        x = x + mixed
        return x + self.channel_mlp(self.channel_norm(x))


class Mixer(nn.Module):
    def __init__(self, patch_dim=6, tokens=9, channels=12, classes=4):
        super().__init__()
        self.embed = nn.Linear(patch_dim, channels)
        self.layers = nn.Sequential(MixerLayer(tokens, channels), MixerLayer(tokens, channels))
        self.head = nn.Linear(channels, classes)

    def forward(self, patches):
        x = self.layers(self.embed(patches))
        return self.head(x.mean(dim=1))


torch.manual_seed(0)
model = Mixer()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for step in range(3):
    patches = torch.randn(4, 9, 6)
    classes = torch.randint(0, 4, (4,))
    loss = F.cross_entropy(model(patches), classes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
