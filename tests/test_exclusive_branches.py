"""`if task == "a": ...` then `if task == "b": ...`: at most one of them runs.

Multi-task trainers (mtan, CAGrad) write one block per task, each with its own backward of the
same prediction. A run takes one block, so there is no second backward through a freed graph;
when two blocks can both run (overlapping tests, another subject, a block that rebinds the
subject), the run raises and loopfix reports it. Each script is run, with the arguments that
would make two blocks run if any can, for the truth.
"""

from __future__ import annotations

import subprocess
import sys

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


SETTING_CHOOSES_LOSS = """\
import sys

import torch
import torch.nn as nn


class Param:
    loss_type = int(sys.argv[1])
    cuda = False


param = Param()
torch.manual_seed(0)
G, D = nn.Linear(4, 4), nn.Linear(4, 1)
optimizer = torch.optim.Adam(G.parameters(), lr=0.01)
for i in range(3):
    {rebind}z = torch.randn(8, 4)
    if param.cuda:
        z = z.cuda()
    fake = G(z)
    if param.cuda:
        fake = fake.cuda()
    out = D(fake)
    if param.loss_type == 1:
        err = -out.mean()
    if param.loss_type == 2:
        err = (out ** 2).mean()
    if param.loss_type == 3:
        err = out.abs().mean()
    if param.loss_type == 4:
        err = torch.relu(1.0 - out).mean()
    if param.loss_type == 5:
        err = torch.relu(1.0 + out).mean()
    if param.loss_type == 6:
        err = nn.functional.softplus(-out).mean()
    optimizer.zero_grad()
    err.backward()
    optimizer.step()
print(err.item())
"""


@pytest.mark.parametrize(
    "rebind, raises",
    [("", False), ("param.loss_type = 9 if i == 1 else param.loss_type\n    ", True)],
    ids=["setting", "setting_changed_in_the_loop"],
)
def test_a_setting_tested_in_separate_ifs_binds_the_loss_in_every_iteration(
    rebind, raises, tmp_path
):
    """RelativisticGAN's `if param.loss_D == 1: errG = ...` ... `if param.loss_D == 8:`:
    the setting is the same in every iteration, so the iteration that binds the loss is
    every iteration (a value with no branch fails on the first one, with a NameError), even
    where a repeated flag (`if param.cuda:`) splits the loop too. The control changes the
    setting inside the loop: the second iteration binds nothing and backpropagates the first
    one's loss again."""
    source = SETTING_CHOOSES_LOSS.format(rebind=rebind)
    for value in range(1, 7):
        (tmp_path / "script.py").write_text(source)
        run = subprocess.run(
            [sys.executable, "script.py", str(value)],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
        assert (run.returncode != 0) is raises
    assert rules_reported(source) == (["LF001"] if raises else [])


SETTING_AND_FLAG = """\
import sys

import torch
import torch.nn as nn


class Args:
    loss = int(sys.argv[1])
    aux = sys.argv[2] == "aux"


args = Args()
torch.manual_seed(0)
backbone, head, aux_head = nn.Linear(4, 4), nn.Linear(4, 1), nn.Linear(4, 1)
params = [*backbone.parameters(), *head.parameters(), *aux_head.parameters()]
optimizer = torch.optim.SGD(params, lr=0.1)
for step in range(3):
    feat = backbone(torch.randn(8, 4))
    out = head(feat)
    if args.aux:
        aux_out = aux_head(feat)
    if args.loss == 1:
        loss = out.pow(2).mean()
    if args.loss == 2:
        loss = out.abs().mean()
    if args.loss == 3:
        loss = -out.mean()
    if args.loss == 4:
        loss = torch.relu(1 - out).mean()
    if args.loss == 5:
        loss = torch.relu(1 + out).mean()
    if args.loss == 6:
        loss = out.exp().mean()
    if args.aux:
        loss = loss + aux_out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(loss.item())
"""


def test_a_setting_of_six_values_and_a_repeated_flag_both_split_the_loop(tmp_path):
    """A loss chosen by a setting in six separate blocks and an auxiliary head under a flag
    tested twice: both splits are followed (7 runs of the setting would leave no room for
    the flag's 2 within twelve runs), and the setting is taken to be one of the values its
    blocks list (they all bind `loss`, which the flag's second block reads: any other value
    fails on the first iteration). No iteration reads the previous one's loss or head."""
    (tmp_path / "script.py").write_text(SETTING_AND_FLAG)
    for value in range(1, 7):
        for aux in ("aux", "no"):
            run = subprocess.run(
                [sys.executable, "script.py", str(value), aux], cwd=tmp_path,
                capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert run.returncode == 0, run.stderr
    assert rules_reported(SETTING_AND_FLAG) == []


EQUAL_CONSTANTS = """\
import torch
import torch.nn as nn


class Args:
    loss = 1


args = Args()
torch.manual_seed(0)
model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    out = model(torch.randn(8, 4)).tanh()
    if args.loss == 1:
        loss = out.pow(2).mean()
        loss.backward()
    if args.loss == {second}:
        loss = out.abs().mean()
        loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
"""


@pytest.mark.parametrize(
    "second, raises",
    [("1.0", True), ("True", True), ("2", False)],
    ids=["float", "bool", "other_value"],
)
def test_a_setting_split_compares_constants_as_python_does(second, raises, tmp_path):
    """`1 == 1.0 == True` in Python: a run that takes the setting to be 1 takes both blocks,
    and the second backward goes through the graph the first one freed."""
    source = EQUAL_CONSTANTS.format(second=second)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF003"] if raises else [])


TWO_SETTINGS_AND_FLAG = """\
import sys

import torch
import torch.nn as nn


class Args:
    act, loss, aux = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "aux"


args = Args()
torch.manual_seed(0)
model, head = nn.Linear(4, 1), nn.Linear(4, 1)
opt = torch.optim.SGD([*model.parameters(), *head.parameters()], lr=0.1)
for i in range(3):
    x = torch.randn(8, 4)
    out = model(x)
    if args.act == "tanh":
        out = out.tanh()
    if args.act == "relu":
        out = out.relu()
    if args.aux:
        aux_out = head(x).sigmoid()
    if args.loss == 1:
        loss = out.pow(2).mean()
    if args.loss == 2:
        loss = out.abs().mean()
    if args.aux:
        loss = loss + aux_out.mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(loss.item())
"""


def test_two_settings_and_a_repeated_flag_all_split_the_loop(tmp_path):
    """Two settings compared with constants and an auxiliary head under a flag tested twice:
    the flag's split is followed beside the settings' (three splits), so the head's output
    is never read in an iteration that did not compute it."""
    (tmp_path / "script.py").write_text(TWO_SETTINGS_AND_FLAG)
    for act in ("tanh", "relu"):
        for loss in ("1", "2"):
            for aux in ("aux", "no"):
                run = subprocess.run(
                    [sys.executable, "script.py", act, loss, aux], cwd=tmp_path,
                    capture_output=True, text=True, timeout=120,
                )  # fmt: skip
                assert run.returncode == 0, run.stderr
    assert rules_reported(TWO_SETTINGS_AND_FLAG) == []
