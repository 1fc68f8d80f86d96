"""Realistic training code for the benchmarks: generated, not copied from anywhere.

`training_script(lines)` builds one large script the way real ones look: model classes
(convolutional, residual, attention and recurrent blocks with their `forward`), data utilities,
metrics, argument parsing, and a few training loops taken from the corpus (some buggy, some
correct), until it has `lines` lines. `all_loops_script(lines)` is the worst case for the
loop model: nothing but training loops.
"""

from __future__ import annotations

import random
from pathlib import Path

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

HEADER = """\
import argparse
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

"""

CONV_BLOCK = """\
class ConvBlock{n}(nn.Module):
    \"\"\"Conv, norm and activation, {channels} channels.\"\"\"

    def __init__(self, in_channels={channels}, out_channels={channels}, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=stride, padding=1)
        self.norm = nn.BatchNorm2d(out_channels)
        self.skip = None
        if stride != 1 or in_channels != out_channels:
            self.skip = nn.Conv2d(in_channels, out_channels, 1, stride=stride)

    def forward(self, x):
        out = F.relu(self.norm(self.conv(x)))
        if self.skip is not None:
            x = self.skip(x)
        return out + x


"""

ATTENTION_BLOCK = """\
class Attention{n}(nn.Module):
    def __init__(self, dim={dim}, heads={heads}, dropout=0.1):
        super().__init__()
        self.heads = heads
        self.scale = (dim // heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        batch, length, dim = x.shape
        qkv = self.qkv(x).reshape(batch, length, 3, self.heads, dim // self.heads)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)
        scores = (q @ k.transpose(-2, -1)) * self.scale
        if mask is not None:
            scores = scores.masked_fill(mask == 0, float("-inf"))
        weights = self.drop(scores.softmax(dim=-1))
        out = (weights @ v).transpose(1, 2).reshape(batch, length, dim)
        return self.out(out)


"""

RECURRENT_ENCODER = """\
class Encoder{n}(nn.Module):
    def __init__(self, vocab={vocab}, hidden={hidden}, layers=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.rnn = nn.{kind}(hidden, hidden, layers, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, tokens, state=None):
        output, state = self.rnn(self.embedding(tokens), state)
        return self.head(output), state

    def init_hidden(self, batch):
        weight = next(self.parameters())
        return weight.new_zeros(2, batch, self.head.in_features)


"""

DATASET = """\
class Windows{n}(Dataset):
    def __init__(self, path, window={window}):
        self.window = window
        self.samples = []
        if os.path.exists(path):
            with open(path) as stream:
                self.samples = [line.strip() for line in stream if line.strip()]

    def __len__(self):
        return max(0, len(self.samples) - self.window)

    def __getitem__(self, index):
        chunk = self.samples[index : index + self.window]
        features = torch.tensor([len(s) for s in chunk], dtype=torch.float32)
        return features, features.mean()


def collate_{n}(batch):
    features = torch.stack([item[0] for item in batch])
    targets = torch.stack([item[1] for item in batch])
    return features, targets


"""

METRICS = """\
def accuracy_{n}(logits, targets, top_k={k}):
    with torch.no_grad():
        best = logits.topk(top_k, dim=-1).indices
        hits = (best == targets.unsqueeze(-1)).any(dim=-1).float()
        return hits.mean().item()


def perplexity_{n}(loss_sum, tokens):
    return math.exp(loss_sum / max(tokens, 1))


def evaluate_{n}(model, loader, device="cpu"):
    model.eval()
    total, count = 0.0, 0
    with torch.no_grad():
        for inputs, targets in loader:
            outputs = model(inputs.to(device))
            total += F.mse_loss(outputs, targets.to(device), reduction="sum").item()
            count += targets.numel()
    model.train()
    return total / max(count, 1)


"""

ARGUMENTS = """\
def parse_arguments_{n}(argv=None):
    parser = argparse.ArgumentParser(description="training")
    parser.add_argument("--data", default="data/train.txt")
    parser.add_argument("--epochs", type=int, default={epochs})
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--clip", type=float, default=0.25)
    parser.add_argument("--seed", type=int, default=1111)
    parser.add_argument("--save", default="model.pt")
    return parser.parse_args(argv)


"""

LOOP_CASES = [
    "lf001_gru_state_init_once",
    "lf001_ok_repackage_hidden",
    "lf002_gan_generator_reuses_d_output",
    "lf002_ok_dcgan",
]


def corpus_loop(case: str, n: int) -> str:
    """A corpus case's script as one function (`def train_<n>():`)."""
    text = (CORPUS / case / "before.py").read_text()
    body = [
        "    " + line if line.strip() else ""
        for line in text.splitlines()
        if not line.startswith(("import ", "from "))
    ]
    return f"def train_{n}():\n" + "\n".join(body) + "\n\n\n"


def _pieces(rng: random.Random, n: int) -> str:
    template = rng.choice([CONV_BLOCK, ATTENTION_BLOCK, RECURRENT_ENCODER, DATASET, METRICS])
    return template.format(
        n=n,
        channels=rng.choice([32, 64, 128]),
        dim=rng.choice([128, 256, 512]),
        heads=rng.choice([4, 8]),
        vocab=rng.choice([1000, 10000]),
        hidden=rng.choice([128, 256]),
        kind=rng.choice(["LSTM", "GRU"]),
        window=rng.choice([8, 16]),
        k=rng.choice([1, 5]),
        epochs=rng.choice([10, 40]),
    )


def training_script(lines: int = 2000, seed: int = 0) -> str:
    """Model, data and metrics code with four training loops spread through it."""
    rng = random.Random(seed)
    parts, n = [HEADER], 0
    loops = [corpus_loop(case, i) for i, case in enumerate(LOOP_CASES)]
    while sum(p.count("\n") for p in parts) < lines:
        n += 1
        if loops and n % 12 == 0:
            parts.append(loops.pop())
        elif n % 25 == 0:
            parts.append(ARGUMENTS.format(n=n, epochs=rng.choice([10, 40])))
        else:
            parts.append(_pieces(rng, n))
    parts.extend(loops)
    return "".join(parts)


def all_loops_script(lines: int = 2000) -> str:
    """The worst case: training loops from every corpus case, one after another."""
    cases = sorted(p.name for p in CORPUS.iterdir() if (p / "before.py").is_file())
    parts, n = [HEADER], 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(corpus_loop(cases[n % len(cases)], n))
        n += 1
    return "".join(parts)
