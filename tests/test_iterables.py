"""A `for` loop over what a call builds (`for k, row in enumerate(net(x))`,
`net(x).split(4, dim=1)`): Python evaluates the iterable once, before the first iteration.
Rows or pieces of one tensor share its graph, so a backward through one item frees what the
next item's backward needs. A list or tuple a call returns may hold separate forwards,
which the model does not tell apart: each item is taken as built anew (precision first).
Each program is run for the truth."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

HEADER = """\
import torch
import torch.nn as nn


class Heads(nn.Module):
    def __init__(self, shared):
        super().__init__()
        self.shared = shared
        self.trunk = nn.Linear(4, 4)
        self.heads = nn.ModuleList([nn.Linear(4, 1), nn.Linear(4, 1)])

    def forward(self, x):
        if self.shared:
            h = torch.tanh(self.trunk(x))
            return [head(h) for head in self.heads]
        return [head(torch.tanh(self.trunk(x))) for head in self.heads]


def batches(n):
    for _ in range(n):
        yield torch.randn(8, 4), torch.randn(8, 1)


torch.manual_seed(0)
net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 8))
heads = Heads(shared={shared})
optimizer = torch.optim.SGD(list(net.parameters()) + list(heads.parameters()), lr=0.1)
"""

# (loop, whether the heads share a trunk, whether it raises, the rules loopfix must report)
PROGRAMS = {
    "a backward per row of the output": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for k, row in enumerate(net(x)):
        row.pow(2).mean().backward()
    optimizer.step()
""",
        False,
        True,
        ["LF003"],
    ),
    "a backward per piece of a split": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for out in net(x).split(4, dim=1):
        out.pow(2).mean().backward()
    optimizer.step()
""",
        False,
        True,
        ["LF003"],
    ),
    "a backward per item of unbind, reversed": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for out in reversed(net(x).unbind(0)):
        out.pow(2).mean().backward()
    optimizer.step()
""",
        False,
        True,
        ["LF003"],
    ),
    # correct code of the same shapes
    "the pieces' losses summed, one backward": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    total = 0
    for k, out in enumerate(net(x).split(4, dim=1)):
        total = total + out.pow(2).mean()
    total.backward()
    optimizer.step()
""",
        False,
        False,
        [],
    ),
    "a forward per slice of the input": (
        """\
for x, y in batches(3):
    for part in x.split(4):
        optimizer.zero_grad()
        net(part).pow(2).mean().backward()
        optimizer.step()
""",
        False,
        False,
        [],
    ),
    "a list of separate forwards, a backward per item": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for k, out in enumerate(heads(x)):
        (out - y).pow(2).mean().backward()
    optimizer.step()
""",
        False,
        False,
        [],
    ),
    "a list comprehension of separate forwards": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for out in [net(part) for part in x.split(4)]:
        out.pow(2).mean().backward()
    optimizer.step()
""",
        False,
        False,
        [],
    ),
    "a generator of separate forwards": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for out in (net(part) for part in x.split(4)):
        out.pow(2).mean().backward()
    optimizer.step()
""",
        False,
        False,
        [],
    ),
}

# a list whose items share a trunk the call ran once: the model does not tell it from a list
# of separate forwards (docs/limits.md), so the second backward is missed
MISSED = {
    "a list of heads over one trunk, a backward per item": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for k, out in enumerate(heads(x)):
        (out - y).pow(2).mean().backward()
    optimizer.step()
""",
        True,
        True,
        ["LF003"],
    ),
}


def check(loop: str, shared: bool, raises: bool, rules: list[str], tmp_path) -> None:
    source = HEADER.format(shared=shared) + loop
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert run.returncode == (1 if raises else 0), run.stderr
    assert rules_reported(source) == rules


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_loop_over_a_calls_result(name, tmp_path):
    check(*PROGRAMS[name], tmp_path)


@pytest.mark.xfail(strict=True, reason="known miss: items of a returned list are not told apart")
@pytest.mark.parametrize("name", list(MISSED))
def test_a_loop_over_a_returned_list_whose_items_share_a_graph(name, tmp_path):
    check(*MISSED[name], tmp_path)


# A loop over a literal list of names runs its body once per item, in order, each time on
# that item alone (`Interpreter._run_unrolled`); a loop that carries a state from one item
# to the next is run as a loop.
LITERAL = {
    "losses of separate networks": (
        """\
net_b = nn.Linear(4, 1)
optimizer_b = torch.optim.SGD(net_b.parameters(), lr=0.1)
for x, y in batches(3):
    loss_a = net(x).pow(2).mean()
    loss_b = (net_b(x) - y).pow(2).mean()
    optimizer.zero_grad()
    optimizer_b.zero_grad()
    for loss in [loss_a, loss_b]:
        loss.backward()
    optimizer.step()
    optimizer_b.step()
""",
        False,
        [],
    ),
    "each optimizer with its own loss (zip)": (
        """\
net_b = nn.Linear(4, 1)
optimizer_b = torch.optim.SGD(net_b.parameters(), lr=0.1)
for x, y in batches(3):
    loss_a = net(x).pow(2).mean()
    loss_b = (net_b(x) - y).pow(2).mean()
    for opt, loss in zip([optimizer, optimizer_b], [loss_a, loss_b]):
        opt.zero_grad()
        loss.backward()
        opt.step()
""",
        False,
        [],
    ),
    "losses sharing a trunk (control)": (
        """\
for x, y in batches(3):
    features = net(x)
    loss_a = features.pow(2).mean()
    loss_b = features.abs().mean()
    optimizer.zero_grad()
    for loss in (loss_a, loss_b):
        loss.backward()
    optimizer.step()
""",
        True,
        ["LF003"],
    ),
}


@pytest.mark.parametrize("name", list(LITERAL))
def test_a_loop_over_a_literal_list_runs_once_per_item(name, tmp_path):
    loop, raises, rules = LITERAL[name]
    check(loop, False, raises, rules, tmp_path)


def test_a_loop_over_literal_batches_that_carries_a_state_is_a_loop(tmp_path):
    """`for x in [x1, x2, x3]: h = cell(x, h)`: the state crosses from one item to the next
    (LF001), as in any loop over batches."""
    loop = """\
cell = nn.GRUCell(4, 8)
cell_optimizer = torch.optim.SGD(cell.parameters(), lr=0.1)
x1, x2, x3 = torch.randn(2, 4), torch.randn(2, 4), torch.randn(2, 4)
h = torch.zeros(2, 8)
for x in [x1, x2, x3]:
    h = cell(x, h)
    cell_optimizer.zero_grad()
    h.pow(2).mean().backward()
    cell_optimizer.step()
"""
    check(loop, False, True, ["LF001"], tmp_path)
