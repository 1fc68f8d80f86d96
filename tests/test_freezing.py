"""A module frozen by a helper is frozen for good only where nothing may unfreeze it: a
helper that sets `requires_grad` to a flag (`set_trainable(encoder, epoch >= 2)`), one that
unfreezes through another (`unfreeze(m)` calling `set_requires_grad(m, True)`), an object's
method (a gradual unfreezer built on the encoder), or `setattr(p, "requires_grad", True)`.
Taken as frozen, the encoder has no graph of its own and LF004 would drop a `retain_graph=True`
the second loss needs once the encoder trains. Each program is run for the truth: as
written it runs, and without the retain it fails once the encoder is unfrozen."""

from __future__ import annotations

import pytest
from scripts import run_python

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

UTILS = """\
import torch


def freeze(module):
    for p in module.parameters():
        p.requires_grad = False


def set_trainable(module, flag):
    for p in module.parameters():
        p.requires_grad_(flag)


def set_requires_grad(module, flag):
    for p in module.parameters():
        p.requires_grad = flag


def unfreeze(module):
    set_requires_grad(module, True)


def thaw(module):
    for p in module.parameters(recurse=False):
        p.requires_grad = True


class GradualUnfreezer:
    def __init__(self, module, at_epoch):
        self.module, self.at_epoch = module, at_epoch

    def step(self, epoch):
        if epoch == self.at_epoch:
            for p in self.module.parameters():
                p.requires_grad = True
"""

MAIN = """\
import torch
import torch.nn as nn

from utils import GradualUnfreezer, freeze, set_trainable, thaw, unfreeze

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(4, 16), nn.ReLU())
head_a, head_b = nn.Linear(16, 3), nn.Linear(16, 1)
params = [p for m in (encoder, head_a, head_b) for p in m.parameters()]
optimizer = torch.optim.SGD(params, lr=0.05)
freeze(encoder)
unfreezer = GradualUnfreezer(encoder, 2)
for epoch in range(4):
    {unfreeze}
    for i in range(3):
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        features = encoder(x)
        loss_a = nn.functional.cross_entropy(head_a(features), y)
        loss_b = head_b(features).pow(2).mean()
        optimizer.zero_grad()
        loss_a.backward(retain_graph=True)
        loss_b.backward()
        optimizer.step()
"""

UNFREEZING = {
    "flag_helper": "set_trainable(encoder, epoch >= 2)",
    "literal_true_helper": "if epoch == 2:\n        set_trainable(encoder, True)",
    "two_level_helper": "if epoch == 2:\n        unfreeze(encoder)",
    "unfreezer_object": "unfreezer.step(epoch)",
    "setattr": (
        "if epoch == 2:\n        for p in encoder.parameters():\n"
        '            setattr(p, "requires_grad", True)'
    ),
    "lambda": "if epoch == 2:\n        (lambda m: m.requires_grad_(True))(encoder)",
    "module_apply": "if epoch == 2:\n        encoder.apply(thaw)",
    "loop_over_a_list": (
        "if epoch == 2:\n        for m in [encoder]:\n            m.requires_grad_(True)"
    ),
    "param_groups": (
        "if epoch == 2:\n        for group in optimizer.param_groups:\n"
        '            for p in group["params"]:\n                p.requires_grad = True'
    ),
    "getattr": (
        "if epoch == 2:\n        for p in encoder.parameters():\n"
        '            getattr(p, "requires_grad_")(True)'
    ),
    "a_parent_module": (
        "if epoch == 2:\n        whole = nn.Sequential(encoder, head_a)\n"
        "        for name, p in whole.named_parameters():\n"
        '            if name.startswith("0."):\n                p.requires_grad = True'
    ),
    "rebound": (
        "if epoch == 2:\n        encoder = nn.Sequential(nn.Linear(4, 16), nn.ReLU())\n"
        '        optimizer.add_param_group({"params": encoder.parameters()})'
    ),
}


def project(tmp_path, unfreeze: str):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "utils.py").write_text(UTILS)
    main = tmp_path / "main.py"
    main.write_text(MAIN.format(unfreeze=unfreeze))
    return main


@pytest.mark.parametrize("unfreeze", list(UNFREEZING.values()), ids=list(UNFREEZING))
def test_a_module_something_may_unfreeze_keeps_its_graph(unfreeze, tmp_path):
    main = project(tmp_path, unfreeze)
    assert run_python([str(main)], tmp_path).returncode == 0
    without_retain = main.read_text().replace("backward(retain_graph=True)", "backward()")
    failed = run_python([], tmp_path, code=without_retain)
    assert "backward through the graph a second time" in failed.stderr
    assert analyse_source(SourceFile.read(main)).findings == []


def test_a_module_frozen_for_good_has_no_graph_to_retain(tmp_path):
    """The control: nothing unfreezes the encoder, and the retain is needless (LF004)."""
    main = project(tmp_path, "pass")
    main.write_text(
        main.read_text()
        .replace(
            "from utils import GradualUnfreezer, freeze, set_trainable, thaw, unfreeze",
            "from utils import freeze",
        )
        .replace("unfreezer = GradualUnfreezer(encoder, 2)\n", "")
    )
    without_retain = main.read_text().replace("backward(retain_graph=True)", "backward()")
    assert run_python([], tmp_path, code=without_retain).returncode == 0
    assert [f.rule for f in analyse_source(SourceFile.read(main)).findings] == ["LF004"]


EVAL_MODE = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(4, 16), nn.Tanh())
        self.head_a, self.head_b = nn.Linear(16, 3), nn.Linear(16, 1)

    def features(self, x):
        if self.training:
            return self.enc(x)
        with torch.no_grad():
            return self.enc(x)


def set_mode(m, training):
    m.train(training)


torch.manual_seed(0)
model = Net()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
model.eval()
for epoch in range(4):
    {back_to_training}
    for i in range(3):
        features = model.features(torch.randn(8, 4))
        loss_a = model.head_a(features).pow(2).mean()
        loss_b = model.head_b(features).pow(2).mean()
        optimizer.zero_grad()
        loss_a.backward(retain_graph=True)
        loss_b.backward()
        optimizer.step()
"""

BACK_TO_TRAINING = {
    "helper": "if epoch == 2:\n        set_mode(model, True)",
    "lambda": "if epoch == 2:\n        model.apply(lambda m: m.train())",
    "attribute": "if epoch == 2:\n        for m in model.modules():\n            m.training = True",
    "through_the_class": "if epoch == 2:\n        nn.Module.train(model)",
}


@pytest.mark.parametrize("back", list(BACK_TO_TRAINING.values()), ids=list(BACK_TO_TRAINING))
def test_a_module_put_back_in_training_unseen_keeps_its_graph(back, tmp_path):
    """`model.eval()` before the loop decides `if self.training:` only where nothing may put
    the model back in training where the model cannot tell which module: then its
    `features` run with grad, and the second loss needs the retained graph."""
    source = EVAL_MODE.format(back_to_training=back)
    main = tmp_path / "main.py"
    main.write_text(source)
    assert run_python([str(main)], tmp_path).returncode == 0
    without_retain = source.replace("backward(retain_graph=True)", "backward()")
    failed = run_python([], tmp_path, code=without_retain)
    assert "backward through the graph a second time" in failed.stderr
    assert analyse_source(SourceFile.read(main)).findings == []


def test_a_module_kept_in_evaluation_has_no_graph_to_retain(tmp_path):
    """The control: nothing puts it back in training (LF004)."""
    source = EVAL_MODE.format(back_to_training="pass").replace(
        "def set_mode(m, training):\n    m.train(training)\n", ""
    )
    main = tmp_path / "main.py"
    main.write_text(source)
    without_retain = source.replace("backward(retain_graph=True)", "backward()")
    assert run_python([], tmp_path, code=without_retain).returncode == 0
    assert [f.rule for f in analyse_source(SourceFile.read(main)).findings] == ["LF004"]
