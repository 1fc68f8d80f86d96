"""A scheduler stepped under a test that it exists (`if self.lr_scheduler is not None:`, a
trainer's optional schedule) steps whenever there is a schedule: at the start of an epoch it
runs one step ahead, as an unguarded one does. Any other test, an `else`, or more in the `if`
leaves the step alone. Each program is run for the truth (PyTorch's warning made an error)."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

PROGRAM = """\
import warnings

import torch
import torch.nn as nn


def train(model, optimizer, scheduler, batches, epochs):
    for epoch in range(epochs):
{guarded}
        for data, target in batches:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(data), target).backward()
            optimizer.step()


warnings.simplefilter("error")  # "Detected call of `lr_scheduler.step()` before ..."
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
train(model, optimizer, scheduler, batches, 3)
"""

# the epoch's first statements -> whether the schedule runs ahead (PyTorch warns), whether
# LF005 is reported
GUARDS = {
    "is not None": (
        "        if scheduler is not None:\n            scheduler.step()",
        True,
        True,
    ),
    "truthiness": ("        if scheduler:\n            scheduler.step()", True, True),
    "unguarded (control)": ("        scheduler.step()", True, True),
    "another test: after the first epoch": (
        "        if epoch > 0:\n            scheduler.step()",
        False,
        False,
    ),
    "the test that it exists and another": (
        "        if scheduler is not None and epoch > 0:\n            scheduler.step()",
        False,
        False,
    ),
    "an else that steps too (not followed)": (
        "        if scheduler is not None:\n            scheduler.step()\n"
        "        else:\n            pass",
        True,
        False,
    ),
}


@pytest.mark.parametrize("name", list(GUARDS))
def test_a_step_guarded_by_the_schedulers_existence_is_a_step(name, tmp_path):
    guarded, ahead, reported = GUARDS[name]
    source = PROGRAM.format(guarded=guarded)
    run = run_script(source, tmp_path)
    assert ("before `optimizer.step()`" in run.stderr) is ahead, run.stderr
    assert rules_reported(source) == (["LF005"] if reported else [])


RESUMED = """\
import warnings

import torch
import torch.nn as nn

warnings.simplefilter("error")
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
start_epoch = 0  # a resumed run sets it, and the schedule is fast-forwarded to it
for epoch in range(3):
    scheduler.step()
    if epoch < start_epoch:
        continue
    for data, target in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(data), target).backward()
        optimizer.step()
"""


def test_a_step_that_would_move_past_a_continue_has_no_fix(tmp_path):
    """The schedule runs ahead (PyTorch warns), but moved after the batch loop the step
    would no longer fast-forward the epochs `continue` skips: reported without a fix."""
    run = run_script(RESUMED, tmp_path)
    assert "before `optimizer.step()`" in run.stderr, run.stderr
    result = analyse_source(SourceFile.from_bytes("train.py", RESUMED.encode()))
    assert [(f.rule, f.fix) for f in result.findings] == [("LF005", None)]
    assert "line 15 may leave the iteration" in result.findings[0].fix_unavailable
    assert result.fixed_text == RESUMED


WARMED_UP = """\
import warnings

import torch
import torch.nn as nn


def run_epoch(model, optimizer, batches):
    for data, target in batches:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(data), target).backward()
        optimizer.step()


warnings.simplefilter("error")
torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
batches = [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(2)]
run_epoch(model, optimizer, batches)  # a first epoch at the base rate
for epoch in range(1, 3):
    if scheduler is not None:
        scheduler.step()
    run_epoch(model, optimizer, batches)
"""


def test_a_step_at_the_start_of_epochs_after_a_warm_up_epoch_is_not_reported(tmp_path):
    run = run_script(WARMED_UP, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(WARMED_UP) == []


def test_a_scheduler_given_its_optimizer_by_keyword_is_paired_with_it(tmp_path):
    """`MultiStepLR(optimizer=G_optimizer, ...)` (pytorch-CartoonGAN) steps before the
    optimizer at the start of each epoch, as when it is given positionally (LF005);
    PyTorch itself warns of the order when it runs."""
    from scripts import rules_reported, run_script

    source = """\
import torch
import torch.nn as nn

G = nn.Linear(4, 4)
G_optimizer = torch.optim.Adam(G.parameters(), lr=1e-3)
G_scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer=G_optimizer, milestones=[2])
for epoch in range(4):
    G_scheduler.step()
    for i in range(3):
        loss = G(torch.randn(2, 4)).pow(2).mean()
        G_optimizer.zero_grad()
        loss.backward()
        G_optimizer.step()
"""
    assert rules_reported(source) == ["LF005"]
    run = run_script(source, tmp_path)
    assert run.returncode == 0 and "lr_scheduler.step()` before `optimizer.step()" in run.stderr
