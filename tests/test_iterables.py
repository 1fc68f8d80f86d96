"""A `for` loop over what a call builds (`for k, out in enumerate(net(x))`): Python evaluates
the iterable once, before the first iteration, so every item holds that one call's graph,
and a backward through one item frees what the next item's backward needs. Each program is
run for the truth."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

HEADER = """\
import torch
import torch.nn as nn


class TwoHeads(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Linear(4, 8)
        self.heads = nn.ModuleList([nn.Linear(8, 1), nn.Linear(8, 1)])

    def forward(self, x):
        h = torch.tanh(self.trunk(x))
        return [head(h) for head in self.heads]


def batches(n):
    for _ in range(n):
        yield torch.randn(8, 4), torch.randn(8, 1)


torch.manual_seed(0)
net = TwoHeads()
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
"""

# (loop, whether it raises, the rules loopfix must report)
PROGRAMS = {
    "one backward per item of the call's list": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for k, out in enumerate(net(x)):
        loss = (out - y).pow(2).mean()
        loss.backward()
    optimizer.step()
""",
        True,
        ["LF003"],
    ),
    "the call's list walked without enumerate": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for out in net(x):
        (out - y).pow(2).mean().backward()
    optimizer.step()
""",
        True,
        ["LF003"],
    ),
    "a tensor split into items": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for out in net(x)[0].split(4):
        out.pow(2).mean().backward()
    optimizer.step()
""",
        True,
        ["LF003"],
    ),
    # correct code of the same shapes
    "the items' losses summed, one backward": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    total = 0
    for k, out in enumerate(net(x)):
        total = total + (out - y).pow(2).mean()
    total.backward()
    optimizer.step()
""",
        False,
        [],
    ),
    "a forward per item of a generator's batches": (
        """\
for step, (x, y) in enumerate(batches(3)):
    optimizer.zero_grad()
    loss = sum((out - y).pow(2).mean() for out in net(x))
    loss.backward()
    optimizer.step()
""",
        False,
        [],
    ),
    "a forward per slice of the input": (
        """\
for x, y in batches(3):
    for part in x.split(4):
        optimizer.zero_grad()
        net(part)[0].pow(2).mean().backward()
        optimizer.step()
""",
        False,
        [],
    ),
    "each item's graph kept for the next one": (
        """\
for x, y in batches(3):
    optimizer.zero_grad()
    for k, out in enumerate(net(x)):
        (out - y).pow(2).mean().backward(retain_graph=k == 0)
    optimizer.step()
""",
        False,
        [],
    ),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_loop_over_a_calls_result_shares_that_calls_graph(name, tmp_path):
    loop, raises, rules = PROGRAMS[name]
    source = HEADER + loop
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert run.returncode == (1 if raises else 0), run.stderr
    assert rules_reported(source) == rules
