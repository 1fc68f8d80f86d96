"""`if task == "a": ...` then `if task == "b": ...`: at most one of them runs.

Multi-task trainers (mtan, CAGrad) write one block per task, each with its own backward of the
same prediction. A run takes one block, so there is no second backward through a freed graph;
when two blocks can both run (overlapping tests, another subject, a block that rebinds the
subject), the run raises and loopfix reports it. Each script is run, with the arguments that
would make two blocks run if any can, for the truth.
"""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

TRAINER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Options:
    task = "{task}"
    mode = "{mode}"


def trainer(model, optimizer, task, mode, opt):
    for k in range(3):
        pred = model(torch.randn(5, 8))
        optimizer.zero_grad()
        if {first}:
            loss = F.cross_entropy(pred, torch.randint(0, 4, (5,)))
            loss.backward()
            {rebind}optimizer.step()
        if {second}:
            loss = (pred.mean(1) - torch.randn(5)).abs().mean()
            loss.backward()
            optimizer.step()
    return loss.item()


torch.manual_seed(0)
model = nn.Linear(8, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
print(trainer(model, optimizer, "{task}", "{mode}", Options()))
"""


REBIND = 'task = "depth"\n            '


@pytest.mark.parametrize(
    "first, second, task, mode, rebind, raises",
    [
        ('task == "semantic"', 'task == "depth"', "semantic", "", "", False),
        ('task == "semantic"', 'task == "depth"', "depth", "", "", False),
        ('opt.task == "semantic"', 'opt.task == "depth"', "depth", "", "", False),
        ('task in ("semantic", "sem")', 'task == "depth"', "sem", "", "", False),
        ("task == 1", "task == 2", "", "", "", False),
        # controls: both blocks can run, and do
        ('task in ("semantic", "both")', 'task in ("depth", "both")', "both", "", "", True),
        ('task == "semantic"', 'mode == "depth"', "semantic", "depth", "", True),
        ('task == "semantic"', 'task == "depth"', "semantic", "", REBIND, True),
        ("task == 1", "task == 1.0", "", "", "", True),
    ],
    ids=["first", "second", "attribute", "in", "numbers", "overlap", "other_subject",
         "rebound", "equal_numbers"],
)  # fmt: skip
def test_blocks_testing_one_subject_against_other_constants_exclude_each_other(
    first, second, task, mode, rebind, raises, tmp_path
):
    source = TRAINER.format(first=first, second=second, task=task, mode=mode, rebind=rebind)
    if "task == 1" in first:  # the numbers: the trainer is given one
        source = source.replace(f'"{task}", "{mode}", Options()', f'1, "{mode}", Options()')
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF003"] if raises else [])
