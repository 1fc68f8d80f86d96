"""A parameter that a call binds to a literal (`truncate=True`, a literal default, a module
constant, a literal the caller was itself given), and that the function never binds again,
decides the tests of it in that call, as Python does. A value unpacked from `**options` may
fill any parameter, and a parameter the body rebinds is not the value passed: both leave
the branches open. Each program is run for the truth."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

PROGRAM = """\
import torch
import torch.nn as nn

TRUNCATE = True


def advance(cell, x, h, truncate={default}):
{rebind}    if truncate:
        h = h.detach()
    return cell(x, h)


def train_step(cell, x, h, truncate):
    return advance(cell, x, h, truncate)


torch.manual_seed(0)
cell = nn.GRUCell(4, 8)
head = nn.Linear(8, 1)
optimizer = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
h = torch.zeros(1, 8)
for t in range(4):
    h = {call}
    loss = head(h).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

# (default, what the helper does first, the loop's call, raises)
PROGRAMS = {
    "True passed by position": ("False", "", "advance(cell, torch.randn(1, 4), h, True)", False),
    "True passed by keyword": (
        "False",
        "",
        "advance(cell, torch.randn(1, 4), h, truncate=True)",
        False,
    ),
    "a literal default": ("True", "", "advance(cell, torch.randn(1, 4), h)", False),
    "a module constant": ("False", "", "advance(cell, torch.randn(1, 4), h, TRUNCATE)", False),
    "a literal handed on by the caller": (
        "False",
        "",
        "train_step(cell, torch.randn(1, 4), h, True)",
        False,
    ),
    "False passed (control)": ("True", "", "advance(cell, torch.randn(1, 4), h, False)", True),
    "a False default (control)": ("False", "", "advance(cell, torch.randn(1, 4), h)", True),
    "the parameter rebound in the helper (control)": (
        "False",
        "    truncate = not truncate\n",
        "advance(cell, torch.randn(1, 4), h, True)",
        True,
    ),
    "unpacked from **options over a True default (control)": (
        "True",
        "",
        'advance(cell, torch.randn(1, 4), h, **{"truncate": False})',
        True,
    ),
    "the defaults rebound by the script (control)": (
        "True",
        "",
        "advance(cell, torch.randn(1, 4), h)\n    advance.__defaults__ = (False,)",
        True,
    ),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_literal_argument_decides_the_tests_of_its_parameter(name, tmp_path):
    default, rebind, call, raises = PROGRAMS[name]
    source = PROGRAM.format(default=default, rebind=rebind, call=call)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF001"] if raises else [])


TWO_STATES = """\
import torch
import torch.nn as nn


def advance(cell, x, h, truncate):
    if truncate:
        h = h.detach()
    return cell(x, h)


torch.manual_seed(0)
cell = nn.GRUCell(4, 8)
head = nn.Linear(16, 1)
optimizer = torch.optim.SGD(list(cell.parameters()) + list(head.parameters()), lr=0.1)
a = torch.zeros(1, 8)
b = torch.zeros(1, 8)
for t in range(4):
    a = advance(cell, torch.randn(1, 4), a, {first})
    b = advance(cell, torch.randn(1, 4), b, {second})
    loss = head(torch.cat([a, b], dim=1)).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    ("first", "second", "carried"), [("True", "False", "b"), ("False", "True", "a")]
)
def test_one_helper_called_with_two_literals_is_decided_per_call(first, second, carried, tmp_path):
    """The same helper, called in one loop for two states with opposite literals (a summary
    computed for one call must not serve the other)."""
    source = TWO_STATES.format(first=first, second=second)
    run = run_script(source, tmp_path)
    assert "backward through the graph a second time" in run.stderr
    findings = analyse_source(SourceFile.from_bytes("train.py", source.encode())).findings
    assert [(f.rule, f"`{carried}`" in f.message) for f in findings] == [("LF001", True)]


WRAPPED = """\
import functools

import torch
import torch.nn as nn

{before}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(4, 8)
{call}
    {decorator}
    def forward(self, x, h, {parameters}):
        if truncate:
            h = h.detach()
        h = self.cell(x, h)
        return h.pow(2).mean(), h


torch.manual_seed(0)
net = Net()
{hook}
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
h = torch.zeros(1, 8)
for t in range(4):
    loss, h = net(torch.randn(1, 4), h, {argument})
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
FORCE_FALSE = """\
def keep_state(forward):
    @functools.wraps(forward)
    def wrapper(self, x, h, truncate):
        return forward(self, x, h, False)

    return wrapper"""

# what changes the argument on its way from `net(x, h, True)` to the forward's body (each
# program raises: the state is kept, and loopfix reports it)
ON_THE_WAY = {
    "a decorator": dict(before=FORCE_FALSE, decorator="@keep_state"),
    "the module's own __call__": dict(
        call=(
            "\n    def __call__(self, x, h, truncate):\n"
            "        return super().__call__(x, h, False)\n"
        )
    ),
    "a forward pre-hook": dict(
        hook="net.register_forward_pre_hook(lambda module, args: (args[0], args[1], False))"
    ),
    "a keyword named as a positional-only parameter": dict(
        parameters="truncate=False, /, **options", argument="truncate=True"
    ),
}


@pytest.mark.parametrize("name", list(ON_THE_WAY))
def test_a_literal_changed_on_its_way_to_the_body_decides_nothing(name, tmp_path):
    fields = {"before": "", "call": "", "decorator": "", "hook": "", "parameters": "truncate"}
    fields["argument"] = "True"
    fields.update(ON_THE_WAY[name])
    source = WRAPPED.format(**fields)
    run = run_script(source, tmp_path)
    assert "backward through the graph a second time" in run.stderr, run.stderr
    assert rules_reported(source) == ["LF001"]


def test_a_default_naming_a_constant_is_read_in_the_function_s_own_module(tmp_path):
    """`def advance(..., truncate=TRUNCATE)` in `helpers.py` (`TRUNCATE = False`) is False
    wherever it is called from, also from a script with its own `TRUNCATE = True`."""
    (tmp_path / "helpers.py").write_text(
        "TRUNCATE = False\n\n\ndef advance(cell, x, h, truncate=TRUNCATE):\n"
        "    if truncate:\n        h = h.detach()\n    return cell(x, h)\n"
    )
    source = PROGRAM.format(default="False", rebind="", call="advance(cell, torch.randn(1, 4), h)")
    source = source.replace("TRUNCATE = True\n", "TRUNCATE = True\nfrom helpers import advance\n")
    source = source.replace(
        source[source.index("def advance") : source.index("def train_step")], ""
    )
    run = run_script(source, tmp_path)
    assert "backward through the graph a second time" in run.stderr, run.stderr
    (tmp_path / "train.py").write_text(source)
    findings = analyse_source(SourceFile.read(tmp_path / "train.py")).findings
    assert [f.rule for f in findings] == ["LF001"]


def test_a_literal_passed_to_a_forward_decides_its_tests(tmp_path):
    """`net(x, h, True)` with nothing between the call and the body: the state is detached
    in every step (the control of the programs above)."""
    fields = {"before": "", "call": "", "decorator": "", "hook": "", "parameters": "truncate"}
    source = WRAPPED.format(**fields, argument="True")
    run = run_script(source, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(source) == []
    assert rules_reported(source.replace("h, True)", "h, False)")) == ["LF001"]
