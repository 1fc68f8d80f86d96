"""Scripts whose data is not on this machine verify on synthetic batches shaped for the model."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import verify_file

SETTINGS = RunSettings(device="cpu", iterations=3, timeout=120)

LANGUAGE_MODEL = """\
import numpy as np
import torch
import torch.nn as nn

corpus = torch.from_numpy(np.load("data/train_tokens.npy"))
batches = [(corpus[i : i + 5], corpus[i + 1 : i + 6]) for i in range(0, len(corpus) - 6, 5)]
embedding, rnn, decoder = nn.Embedding(100, 8), nn.LSTM(8, 16), nn.Linear(16, 100)
model = nn.ModuleDict({"embedding": embedding, "rnn": rnn, "decoder": decoder})
optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
hidden = None
for data, targets in batches:
    output, hidden = rnn(embedding(data), hidden)
    loss = nn.functional.cross_entropy(decoder(output).view(-1, 100), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

GAN_ON_SAVED_SAMPLES = """\
import torch
import torch.nn as nn

real_samples = torch.load("samples/real.pt")
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
netD = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
opt_d = torch.optim.Adam(netD.parameters(), lr=1e-3)
opt_g = torch.optim.Adam(netG.parameters(), lr=1e-3)
bce = nn.BCEWithLogitsLoss()
for real in real_samples:
    d_real = netD(real)
    d_fake = netD(netG(torch.randn(real.size(0), 4)))
    opt_d.zero_grad()
    loss_d = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
    loss_d.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    loss_g = bce(d_fake, torch.ones_like(d_fake))
    loss_g.backward()
    opt_g.step()
"""


def verify(tmp_path: Path, text: str):
    path = tmp_path / "train.py"
    path.write_text(text)
    return verify_file(analyse_source(SourceFile.read(path)), SETTINGS)


def test_language_model_without_its_token_file_verifies_on_synthetic_ids(tmp_path):
    (verdict,) = verify(tmp_path, LANGUAGE_MODEL)
    assert (verdict.rule, verdict.verdict) == ("LF001", "equivalent")
    assert verdict.level == "live (synthetic data)"
    assert "Trying to backward through the graph a second time" in verdict.original


def test_gan_without_its_samples_verifies_the_reorder_on_synthetic_batches(tmp_path):
    (verdict,) = verify(tmp_path, GAN_ON_SAVED_SAMPLES)
    assert (verdict.rule, verdict.verdict) == ("LF002", "equivalent")
    assert verdict.level == "live (synthetic data)"


def test_a_failure_that_is_not_about_data_is_not_papered_over(tmp_path):
    broken = LANGUAGE_MODEL.replace('np.load("data/train_tokens.npy")', "np.zeros(3) + None")
    (verdict,) = verify(tmp_path, broken)
    assert verdict.verdict.startswith("unverified") and verdict.level == "unverified"


MAIN_BLOCK_WITH_EPOCHS = """\
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


def load_split(path):
    features, labels = torch.load(path)
    return TensorDataset(features, labels)


if __name__ == "__main__":
    loader = DataLoader(load_split("data/train.pt"), batch_size=4)
    lstm, head = nn.LSTM(6, 10, batch_first=True), nn.Linear(10, 3)
    optimizer = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-3)
    for epoch in range(2):
        state = None
        for sequences, labels in loader:
            out, state = lstm(sequences, state)
            loss = nn.functional.cross_entropy(head(out[:, -1]), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
"""


def test_batch_loop_inside_an_epoch_loop_in_a_main_block(tmp_path):
    (verdict,) = verify(tmp_path, MAIN_BLOCK_WITH_EPOCHS)
    assert (verdict.rule, verdict.verdict) == ("LF001", "equivalent"), verdict
    assert verdict.level == "live (synthetic data)"


LOOP_IN_A_FUNCTION = """\
import torch
import torch.nn as nn


def main(path="data/train.pt"):
    loader = torch.load(path)
    gru, head = nn.GRU(6, 10), nn.Linear(10, 1)
    optimizer = torch.optim.SGD([*gru.parameters(), *head.parameters()], lr=0.1)
    hidden = None
    for sequences, targets in loader:
        out, hidden = gru(sequences, hidden)
        loss = nn.functional.mse_loss(head(out[-1]), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    main()
"""


def test_a_loop_inside_a_function_the_script_calls(tmp_path):
    (verdict,) = verify(tmp_path, LOOP_IN_A_FUNCTION)
    assert (verdict.rule, verdict.verdict) == ("LF001", "equivalent"), verdict
    assert verdict.level == "live (synthetic data)"


COMMAND_LINE_SCRIPT = """\
import argparse

import torch
import torch.nn as nn


def main(args):
    batches = torch.load(args.data)
    lstm = nn.LSTM(args.emsize, args.nhid, dropout=args.dropout)
    head = nn.Linear(args.nhid, 10)
    optimizer = torch.optim.SGD([*lstm.parameters(), *head.parameters()], lr=args.lr)
    hidden = None
    for epoch in range(args.epochs):
        for x, y in batches:
            out, hidden = lstm(x, hidden)
            loss = nn.functional.cross_entropy(head(out[-1]), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    for name in ("--emsize", "--nhid", "--epochs"):
        parser.add_argument(name, type=int, required=True)
    parser.add_argument("--dropout", type=float, default=0.0)
    parser.add_argument("--lr", type=float, default=0.1)
    main(parser.parse_args())
"""


def test_a_script_that_needs_a_command_line_is_verified_through_its_function(tmp_path):
    """Run as it is, the script stops at argparse (it was given no arguments) before any
    backward pass; `main(args)` is then called with options made up by name, and its data
    file (which does not exist here) is replaced by synthetic batches."""
    (verdict,) = verify(tmp_path, COMMAND_LINE_SCRIPT)
    assert (verdict.rule, verdict.verdict) == ("LF001", "equivalent"), verdict
    assert verdict.level == "live (synthetic data)"
    assert "Trying to backward through the graph a second time" in verdict.original


SEGMENTATION = """\
import argparse
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm

parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--epochs", type=int, default=1)
args = parser.parse_args()
{check}
loader = torch.load(os.path.join(args.data, "train_batches.pt"))
encoder = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, padding=1))
head = nn.Conv2d(8, 4, 1)
optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
for epoch in range(args.epochs):
    for step, (images, {target}) in enumerate(tqdm(loader, desc="train")):
        features = encoder(images)
        main = {loss}
        smooth = features.abs().mean()
        optimizer.zero_grad()
        main.backward()
        smooth.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    "check",
    [
        "",
        "assert os.path.isdir(args.data), 'no data'",
        "if not os.path.exists(args.data):\n    sys.exit('download the data first')",
    ],
)
def test_a_segmentation_loop_over_missing_data_verifies_with_per_pixel_labels(tmp_path, check):
    """A required `--data` gets a made-up path; the script's own check for it (an assert, or
    `sys.exit`) counts as missing data; `enumerate(tqdm(loader))` is fed batches (tqdm is a
    stand-in when it is not installed); the labels are per pixel, as the output is."""
    text = SEGMENTATION.format(
        check=check, target="masks", loss="F.cross_entropy(head(features), masks)"
    )
    (verdict,) = verify(tmp_path, text)
    assert verdict.verdict == "equivalent", verdict.verdict
    assert verdict.level == "live (synthetic data)"


def test_a_reconstruction_target_takes_the_shape_of_the_output(tmp_path):
    text = SEGMENTATION.format(
        check="",
        target="clean",
        loss="F.mse_loss(head(features), clean[:, :1].expand(-1, 4, -1, -1))",
    )
    (verdict,) = verify(tmp_path, text)
    assert verdict.verdict == "equivalent", verdict.verdict


INDEXED = """\
import numpy as np
import torch
import torch.nn as nn

features = torch.from_numpy(np.load("data/features.npy")).float()
labels = torch.from_numpy(np.load("data/labels.npy")).long()
encoder = nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 16))
classifier = nn.Linear(16, 3)
decoder = nn.Linear(16, 12)
optimizer = torch.optim.Adam([*encoder.parameters(), *classifier.parameters()], lr=1e-3)
batch_size = 8
for epoch in range(2):
    order = torch.randperm(len(features))
    for start in range(0, len(features), batch_size):
        {index}
        z = encoder(xb)
        main = nn.functional.cross_entropy(classifier(z), yb)
        aux = nn.functional.mse_loss(decoder(z), xb)
        optimizer.zero_grad()
        main.backward()
        aux.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    "index",
    [
        "idx = order[start : start + batch_size]\n        xb, yb = features[idx], labels[idx]",
        "xb = features[start : start + batch_size]\n"
        "        yb = labels[start : start + batch_size]",
    ],
)
def test_batches_indexed_out_of_arrays_that_are_not_here(tmp_path, index):
    """`X[idx]` and `data[i : i + bs]` inside the loop: the arrays themselves become synthetic
    (inputs for the first model, class labels for the loss)."""
    (verdict,) = verify(tmp_path, INDEXED.format(index=index))
    assert verdict.verdict == "equivalent", verdict.verdict
    assert verdict.level == "live (synthetic data)"


NEXT_BATCH = """\
import torch
import torch.nn as nn

loader = torch.load("data/loader.pt")
batches = iter(loader)
model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 4))
head = nn.Linear(4, 2)
optimizer = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
for step in range(4):
    x, y = next(batches)
    features = model(x)
    main = nn.functional.mse_loss(head(features), y)
    aux = features.pow(2).mean()
    optimizer.zero_grad()
    main.backward()
    aux.backward()
    optimizer.step()
"""


def test_batches_drawn_with_next_from_an_iterator_that_is_not_here(tmp_path):
    (verdict,) = verify(tmp_path, NEXT_BATCH)
    assert verdict.verdict == "equivalent", verdict.verdict
    assert verdict.level == "live (synthetic data)"


ZIPPED = """\
import torch
import torch.nn as nn

labeled = torch.load("data/labeled.pt")
unlabeled = torch.load("data/unlabeled.pt")
model = nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
hidden = torch.zeros(4, 3)
for (x, y), u in zip(labeled, unlabeled):
    logits = model(x) + hidden
    consistency = (model(u) - hidden).pow(2).mean()
    loss = nn.functional.cross_entropy(logits, y) + consistency
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    hidden = logits
"""


def test_two_loaders_zipped_are_each_fed(tmp_path):
    """Semi-supervised training over `zip(labeled, unlabeled)` (here with a carried graph,
    LF001): each loader gets its own batches, shaped for its part of the loop target."""
    (verdict,) = verify(tmp_path, ZIPPED)
    assert verdict.verdict == "equivalent", verdict.verdict
    assert verdict.level == "live (synthetic data)"
