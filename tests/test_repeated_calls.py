"""Every call of a helper builds its own graph, as it does when run.

A helper, a method, or wrappers around one are called several times from one place with the
same network (`v1 = values(x, critic)`, `v2 = values(x, critic)`), on the same or other
inputs. Each program of the grid is run (all in one child process, for the truth), then
analysed; what loopfix reports must be what the run shows:

- each result backpropagated once: nothing (correct code);
- a result that adds the one before it: the second backward goes through a freed graph
  (LF003);
- an optimizer step between two backwards: the next backward's graph saved the weights the
  step changed (LF002), also when the network is called through an object that keeps it
  (`Agent(critic)`, `self.net(x)`).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import pytest
from scripts import rules_reported

HEADER = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer = torch.optim.Adam(critic.parameters())


def values(x, net):
    return net(x) - 1.0


class Agent:
    def __init__(self, net):
        self.net = net

    def values(self, x):
        return self.net(x) - 1.0

    def pair(self, x):
        return self.values(x), self.values(2 * x)


def via_0(x):
    return values(x, critic) * 1.5


def via_1(x):
    return values(x, critic) + 0.5


def via_2(x):
    return values(x, critic).tanh()


agent = Agent(critic)
for step in range(2):
    x = torch.randn(8, 4)
"""

CALLS = {  # the i-th call of each form, on `{arg}`
    "function": "values({arg}, critic)",
    "method": "agent.values({arg})",
    "wrappers": "via_{i}({arg})",
    "tuple_items": "agent.pair({arg})[{i} % 2]",
}
ARGUMENTS = {"same": "x", "other": "x * {n}"}
ERRORS = {  # the rule that names each error
    "LF003": "backward through the graph a second time",
    "LF002": "modified by an inplace operation",
}


def program(form: str, argument: str, pattern: str, count: int) -> str:
    lines = []
    for i in range(count):
        arg = ARGUMENTS[argument].format(n=i + 1)
        call = CALLS[form].format(i=i, arg=arg)
        through = f" + v{i - 1}" if pattern == "through" and i else ""
        lines.append(f"    v{i} = {call}{through}\n")
    lines.append("    optimizer.zero_grad()\n")
    for i in range(count):
        if pattern == "step" and i:
            lines.append("    optimizer.step()\n")
        lines.append(f"    v{i}.pow(2).mean().backward()\n")
    lines.append("    optimizer.step()\n")
    return HEADER + "".join(lines)


GRID = list(
    itertools.product(sorted(CALLS), sorted(ARGUMENTS), ["each", "through", "step"], [2, 3])
)
RUNNER = """\
import json, sys
results = []
for source in json.load(sys.stdin):
    try:
        exec(compile(source, "train.py", "exec"), {"__name__": "__main__"})
        results.append("")
    except RuntimeError as error:
        results.append(str(error))
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def runs() -> dict[tuple, str]:
    """Each program of the grid -> the error its run raised ("" when it ran through)."""
    sources = [program(*case) for case in GRID]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(sources),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return dict(zip(GRID, json.loads(done.stdout), strict=True))


@pytest.mark.parametrize("case", GRID, ids=["-".join(map(str, case)) for case in GRID])
def test_what_is_reported_is_what_the_run_raises(case, runs):
    raised = [rule for rule, error in ERRORS.items() if error in runs[case]]
    expected = {"each": [], "through": ["LF003"], "step": ["LF002"]}[case[2]]
    assert raised == expected, runs[case]  # the grid's own claim, checked by running it
    assert sorted(set(rules_reported(program(*case)))) == raised
