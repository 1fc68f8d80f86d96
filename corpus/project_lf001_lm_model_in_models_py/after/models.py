import torch
import torch.nn as nn


class CharLM(nn.Module):
    """A character-level LSTM language model; forward returns (logits, (h, c))."""

    def __init__(self, vocab, width, layers=2):
        super().__init__()
        self.width, self.layers = width, layers
        self.embed = nn.Embedding(vocab, width)
        self.lstm = nn.LSTM(width, width, layers)
        self.head = nn.Linear(width, vocab)

    def forward(self, chars, state):
        seq, state = self.lstm(self.embed(chars), state)
        return self.head(seq), state

    def begin_state(self, batch):
        weight = next(self.parameters())
        shape = (self.layers, batch, self.width)
        return weight.new_zeros(shape), weight.new_zeros(shape)
