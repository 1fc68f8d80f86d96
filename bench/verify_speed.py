"""Benchmark: verification time per rewrite (not a test; figures go in the README).

    .venv/bin/python bench/verify_speed.py [--iterations N] [--device cpu] [--repo]

Runs `loopfix verify` logic on every positive corpus case and prints the seconds per rewrite
(median and max) and per child run. Each file's rewrites share its runs: original, patched and,
for LF002/LF003, the deferred-step reference. `--repo` measures instead what real repositories
look like: two training scripts of a project that import their models from a package, take a
required `--data` argument, check for their data and load it (it is not there: each is run
again on synthetic batches), import matplotlib and tqdm (stood in for when missing) and load a
pretrained checkpoint (replaced by the seeded initialisation).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import collect_runs, judge

CORPUS = Path(__file__).resolve().parent.parent / "corpus"


MODELS = """\
import torch.nn as nn


class Segmenter(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        layers = []
        for channels_in, channels_out in [(3, 16), (16, 32), (32, 32), (32, 16)]:
            layers += [nn.Conv2d(channels_in, channels_out, 3, padding=1), nn.ReLU()]
        self.encoder = nn.Sequential(*layers)
        self.head = nn.Conv2d(16, classes, 1)

    def forward(self, x):
        return self.head(self.encoder(x))


class Tagger(nn.Module):
    def __init__(self, vocab=500, width=64, tags=9):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.rnn = nn.LSTM(width, width, num_layers=2)
        self.out = nn.Linear(width, tags)

    def forward(self, tokens, state):
        output, state = self.rnn(self.embed(tokens), state)
        return self.out(output), state
"""

SEGMENT = """\
import argparse
import os

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from tqdm import tqdm

from project.models import Segmenter

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
args = parser.parse_args()
assert os.path.isdir(args.data), "download the dataset first"
loader = torch.load(os.path.join(args.data, "batches.pt"))
model = Segmenter()
model.load_state_dict(torch.load("checkpoints/pretrained.pth"))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step, (images, masks) in enumerate(tqdm(loader)):
    features = model.encoder(images)
    seg = F.cross_entropy(model.head(features), masks)
    smooth = features.abs().mean()
    optimizer.zero_grad()
    seg.backward()
    smooth.backward()
    optimizer.step()
    plt.plot([step], [seg.item()])
"""

TAG = """\
import argparse

import torch
import torch.nn.functional as F

from project.models import Tagger

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
args = parser.parse_args()
stream = torch.load(args.data + "/tokens.pt")
model = Tagger()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
state = None
for tokens, tags in stream:
    logits, state = model(tokens, state)
    loss = F.cross_entropy(logits.view(-1, 9), tags.view(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def repository_files(root: Path) -> list[Path]:
    (root / "project").mkdir()
    (root / "pyproject.toml").write_text("[project]\nname = 'project'\n")
    (root / "project" / "__init__.py").write_text("")
    (root / "project" / "models.py").write_text(MODELS)
    (root / "segment.py").write_text(SEGMENT)
    (root / "tag.py").write_text(TAG)
    return [root / "segment.py", root / "tag.py"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repo", action="store_true")
    args = parser.parse_args()
    settings = RunSettings(device=args.device, iterations=args.iterations)
    if args.repo:
        with tempfile.TemporaryDirectory() as folder:
            measure(repository_files(Path(folder)), settings)
        return
    measure(sorted(CORPUS.glob("*/before.py")), settings)


def measure(files: list[Path], settings: RunSettings) -> None:
    per_rewrite, per_run, verdicts = [], [], []
    started = time.monotonic()
    for before in files:
        result = analyse_source(SourceFile.read(before))
        units = collect_runs(result, settings)
        for runs in units.values():
            if not isinstance(runs, str):
                made = [
                    r for r in (runs.original, runs.patched, runs.reference, runs.retained) if r
                ]
                per_run += [r.seconds for r in made]
        for verdict in judge(result, units):
            per_rewrite.append(verdict.seconds)
            verdicts.append(verdict.verdict)
            if len(files) < 5:
                print(f"{before.name}: {verdict.summary()}")
    total = time.monotonic() - started
    print(f"rewrites verified: {len(per_rewrite)}; equivalent: {verdicts.count('equivalent')}")
    median, worst = statistics.median(per_rewrite), max(per_rewrite)
    print(f"seconds per rewrite: median {median:.1f}, max {worst:.1f}")
    print(f"seconds per child run: median {statistics.median(per_run):.1f}, max {max(per_run):.1f}")
    print(f"wall time: {total:.0f} s for {len(per_run)} child runs")


if __name__ == "__main__":
    main()
