import torch
import torch.nn as nn


class TinyLM(nn.Module):
    def __init__(self, vocab=32, width=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, vocab)

    def forward(self, tokens):
        return self.head(torch.tanh(self.embed(tokens)))

    def configure_optimizers(self, lr, weight_decay):
        """The model builds its own optimizer (minGPT, nanoGPT)."""
        return torch.optim.AdamW(self.parameters(), lr=lr, weight_decay=weight_decay)
