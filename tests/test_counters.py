"""Loops that test their own counter: which iterations each `if` runs in (`model.counters`),
and what the loop model concludes from it. The scripts here run: each claim about a script
raising or not is checked by running it."""

from __future__ import annotations

import ast
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scripts import rules_reported, run_script

from loopfix.model.counters import Phase, loop_counter


def counter_of(loop_source: str):
    return loop_counter(ast.parse(textwrap.dedent(loop_source)).body[0])


def test_a_loop_that_does_not_test_its_counter_has_none():
    assert counter_of("for t in range(5):\n    h = f(h)\n") is None
    assert counter_of("for x in loader:\n    if x == 0:\n        pass\n") is None


def test_a_lone_periodic_test_splits_nothing():
    """`if i % 100 == 0: print(...)` alone: following its phases would give what the
    ordinary join of both sides gives, at several times the cost."""
    assert counter_of("for i in range(n):\n    if i % 100 == 0:\n        log(i)\n") is None
    assert counter_of("for i in range(n):\n    if i % 9 == 0 and i > 0:\n        log(i)\n") is None
    two = "for i in range(n):\n    if i % 9 == 0:\n        a = f()\n"
    two += "    if i % 9 == 0:\n        g(a)\n"
    assert counter_of(two).residues == frozenset({0})


def test_a_counter_assigned_in_the_body_is_not_followed():
    assert counter_of("for t in range(5):\n    t += 1\n    if t == 0:\n        pass\n") is None


@pytest.mark.parametrize(
    ("loop", "test", "first", "later"),
    [
        ("for t in range(n):", "t == 0", True, False),
        ("for t in range(n):", "0 == t", True, False),
        ("for t in range(n):", "not t", True, False),
        ("for t in range(n):", "t > 0", False, True),
        ("for t in range(n):", "t", False, True),
        ("for t in range(n):", "t >= 1", False, True),
        ("for t in range(1, n):", "t == 1", True, False),
        ("for t in range(1, n):", "t > 1", False, True),
        ("for i, x in enumerate(xs):", "i == 0", True, False),
        ("for i, x in enumerate(xs, start=1):", "i == 1", True, False),
    ],
)
def test_first_iteration_tests(loop, test, first, later):
    counter = counter_of(f"{loop}\n    if {test}:\n        pass\n")
    parsed = ast.parse(test, mode="eval").body
    assert counter.holds(parsed, counter.initial()) is first
    for phase in counter.successors(counter.initial()):
        assert counter.holds(parsed, phase) is later


@pytest.mark.parametrize(
    "loop",
    ["for t in range(k, n):", "for t in range(0, n, -1):", "for t in range(0, n, 2 * k):"],
)
def test_a_loop_whose_counter_is_not_known_from_its_start_has_none(loop):
    """A start that is not a constant, or a step that is neither a positive constant nor a
    name."""
    assert counter_of(f"{loop}\n    if t == 0:\n        pass\n") is None


@pytest.mark.parametrize("loop", ["for t in range(0, n, 2):", "for t in range(0, n, bptt):"])
def test_a_counter_stepping_by_more_than_one_tells_its_first_iteration_only(loop):
    """Its first value is the start and every later one is above it: `t == 0` holds in the
    first iteration only; a residue (`t % 4 == 0`) is not followed, as it depends on the
    step."""
    counter = counter_of(
        f"{loop}\n    if t == 0:\n        pass\n    if t % 4 == 0:\n        pass\n"
    )
    first = ast.parse("t == 0", mode="eval").body
    assert counter.holds(first, counter.initial()) is True
    for phase in counter.successors(counter.initial()):
        assert counter.holds(first, phase) is False
    assert counter.modulus is None


def _real_path_is_followed(counter, tests: list[str], steps: int, real) -> int:
    """Walk the real counter 0, 1, ... alongside the phases: at each step a phase that can
    follow one matching the previous step gives every test its real value (`real(t)`).
    Returns the most phases offered at one step (1: the count is followed exactly)."""
    if counter is None:
        return 1  # no phases: both sides of every test, as for any other test
    parsed = [ast.parse(t, mode="eval").body for t in tests]
    offered, widest = counter.initials(), 1
    for t in range(steps):
        matching = [p for p in offered if tuple(counter.holds(e, p) for e in parsed) == real(t)]
        assert matching, (t, offered)
        offered = list(dict.fromkeys(q for p in matching for q in counter.successors(p)))
        widest = max(widest, len(offered))
    return widest


@settings(deadline=None)
@given(k=st.integers(2, 40), shift=st.integers(-3, 3), residue=st.integers(0, 39))
def test_every_real_iteration_is_a_phase_that_decides_the_tests_as_it_does(k, shift, residue):
    residue %= k
    tests = [f"(t + {shift}) % {k} == {residue}", f"t % {k} == {k - 1}", "t == 0"]
    loop = "for t in range(n):\n" + "".join(f"    if {t}:\n        pass\n" for t in tests)
    counter = counter_of(loop)

    def real(t):
        return ((t + shift) % k == residue, t % k == k - 1, t == 0)

    widest = _real_path_is_followed(counter, tests, 3 * k, real)
    # two residues of a small constant modulus: every residue is a phase, no guessing
    if k <= 16 and (residue - shift) % k != k - 1:
        assert widest == 1


def test_a_modulus_that_is_a_name_tells_the_tested_residues_apart():
    loop = (
        "for i, x in enumerate(xs):\n"
        "    if i % args.bptt == 0:\n        pass\n"
        "    if i % args.bptt == args.bptt - 1:\n        pass\n"
    )
    counter = counter_of(loop)
    start, end = (
        ast.parse(t, mode="eval").body
        for t in ("i % args.bptt == 0", "i % args.bptt == args.bptt - 1")
    )
    assert counter.initial() == Phase(True, 0)
    # the iteration after a window's last one starts the next window
    (after_end,) = counter.successors(Phase(False, -1))
    assert counter.holds(start, after_end) is True and counter.holds(end, after_end) is False
    # between them any number of untested residues (none when k == 2)
    assert set(counter.successors(Phase(False, 0))) == {Phase(False, None), Phase(False, -1)}
    assert Phase(False, -1) in counter.successors(Phase(False, None))


@settings(deadline=None)
@given(k=st.integers(1, 30), residues=st.sets(st.integers(-3, 3), min_size=1, max_size=3))
def test_a_modulus_that_is_a_name_follows_every_modulus_above_the_spread(k, residues):
    """Whatever `args.k` is at run time (larger than the spread of the residues tested and
    the counter's start), the real run is a path through the phases."""
    if 1 < k <= max(residues | {0}) - min(residues | {0}):
        return  # the modulus is taken to be 1 or to exceed the spread of the residues and start
    tests = [f"i % args.k == {r}" if r >= 0 else f"i % args.k == args.k - {-r}" for r in residues]
    loop = "for i in range(n):\n" + "".join(f"    if {t}:\n        pass\n" for t in tests)

    def real(t):  # `i % k == k - d` is never true when d > k
        return tuple(t % k == (r if r >= 0 else k + r) for r in residues)

    _real_path_is_followed(counter_of(loop), tests, 3 * k, real)


def test_tests_combined_with_and_or_not():
    counter = counter_of(
        "for t in range(n):\n    if t % 4 == 0 and t > 0:\n        pass\n"
        "    if t % 4 == 1:\n        pass\n"
    )
    both = ast.parse("t % 4 == 0 and t > 0", mode="eval").body
    other = ast.parse("t % 4 == 0 or flag", mode="eval").body
    negated = ast.parse("not t % 4 == 0", mode="eval").body
    values = []
    phase = counter.initial()
    for _ in range(9):
        values.append(
            (counter.holds(both, phase), counter.holds(other, phase), counter.holds(negated, phase))
        )
        (phase,) = counter.successors(phase)
    assert [v[0] for v in values] == [False, False, False, False, True, False, False, False, True]
    assert [v[1] for v in values] == [True, None, None, None, True, None, None, None, True]
    assert [v[2] for v in values] == [t % 4 != 0 for t in range(9)]


# -- what the loop model concludes ---------------------------------------------------------

ALTERNATING_BUG = """
import torch
import torch.nn as nn

torch.manual_seed(0)
net = nn.Linear(4, 4)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
for it in range(6):
    x = torch.randn(2, 4)
    if it % 2 == 0:
        features = net(x)
    loss = features.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""

# The detach comes one step after the window's backward: the step in between builds on the
# freed graph, but its loss is dropped with the reset, so no backward goes through it.
LATE_RESET = """
import torch
import torch.nn as nn

torch.manual_seed(0)
rnn, head = nn.GRUCell(4, 8), nn.Linear(8, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
stream = torch.randn(20, 2, 4)
hidden = torch.zeros(2, 8)
loss = 0
for t in range(20):
    if t % 5 == 1:
        hidden = hidden.detach()
        loss = 0
    hidden = rnn(stream[t], hidden)
    loss = loss + head(hidden).pow(2).mean()
    if t % 5 == 4:
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""

# A baseline computed only at an episode's first step and used by every step's backward:
# from the second step on it carries the first step's freed graph.
FIRST_STEP_BASELINE = """
import torch
import torch.nn as nn

torch.manual_seed(0)
critic, actor = nn.Linear(4, 1), nn.Linear(4, 2)
optimizer = torch.optim.SGD([*critic.parameters(), *actor.parameters()], lr=0.1)
for episode in range(3):
    state = torch.randn(1, 4)
    for t in range(5):
        if t == 0:
            baseline = critic(state)
        log_prob = torch.log_softmax(actor(state), -1)[0, 0]
        loss = -(log_prob * (1.0 - baseline)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        state = torch.randn(1, 4)
"""


@pytest.mark.parametrize(
    "source", [ALTERNATING_BUG, FIRST_STEP_BASELINE], ids=["alternating", "first_step_baseline"]
)
def test_a_value_read_in_iterations_that_do_not_set_it_is_still_found(source, tmp_path):
    run = run_script(source, tmp_path)
    assert "backward through the graph a second time" in run.stderr
    assert rules_reported(source) == ["LF001"]


def test_a_reset_one_step_late_that_drops_the_stale_loss_is_not_reported(tmp_path):
    run = run_script(LATE_RESET, tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert rules_reported(LATE_RESET) == []


@pytest.mark.parametrize(
    ("loop", "test", "last"),
    [
        ("for t in range(n):", "t == n - 1", True),
        ("for t in range(n):", "t + 1 == n", True),
        ("for t in range(n):", "n - 1 == t", True),
        ("for t in range(n):", "t >= n - 1", True),
        ("for t in range(n):", "t > n - 2", True),
        ("for t in range(n):", "t < n - 1", False),
        ("for t in range(n):", "t != n - 1", False),
        ("for t in range(n):", "not t == n - 1", False),
        ("for t in range(1, n):", "t == n - 1", True),
        ("for k, c in enumerate(chunks):", "k == len(chunks) - 1", True),
        ("for k, c in enumerate(chunks):", "k + 1 < len(chunks)", False),
    ],
)
def test_last_iteration_tests(loop, test, last):
    counter = counter_of(f"{loop}\n    if {test}:\n        pass\n")
    parsed = ast.parse(test, mode="eval").body
    firsts = counter.initials()
    assert {counter.holds(parsed, p) for p in firsts} == {True, False}
    for phase in firsts + [q for p in firsts for q in counter.successors(p)]:
        assert counter.holds(parsed, phase) is (phase.last if last else not phase.last)
        if phase.last:
            assert counter.successors(phase) == []


@pytest.mark.parametrize(
    "loop",
    [
        "for t in range(n):\n    n -= 1\n    if t == n - 1:\n        pass\n",
        "for k, c in enumerate(chunks, 1):\n    if k == len(chunks):\n        pass\n",
        "for t in range(n):\n    if t == m - 1:\n        pass\n",
    ],
    ids=["bound_changes", "enumerate_from_1", "another_bound"],
)
def test_a_last_test_the_loop_cannot_tie_to_its_bound_is_not_followed(loop):
    counter = counter_of(loop)
    assert counter is None or counter.end is None


@settings(deadline=None)
@given(n=st.integers(1, 12), k=st.integers(2, 5))
def test_the_last_iteration_is_reachable_after_any_number_of_iterations(n, k):
    """For a loop of n iterations testing `t % k == 0` and `t == n - 1`: the real run is a
    path through the phases, and it ends in a last phase."""
    tests = [f"t % {k} == 0", "t == n - 1"]
    loop = "for t in range(n):\n" + "".join(f"    if {t}:\n        pass\n" for t in tests)
    counter = counter_of(loop)
    parsed = [ast.parse(t, mode="eval").body for t in tests]
    offered = counter.initials()
    for t in range(n):
        real = (t % k == 0, t == n - 1)
        matching = [p for p in offered if tuple(counter.holds(e, p) for e in parsed) == real]
        assert matching, (t, offered)
        offered = counter.successors(matching[0])
    assert offered == []


# Two task heads updated in alternation over a shared backbone: with a period of 1 both run
# every iteration, and the second backward goes through the backbone's freed graph.
ALTERNATING_TASKS = """
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--task-period", type=int, default=1)
args = parser.parse_args()
torch.manual_seed(0)
backbone = nn.Sequential(nn.Linear(4, 4), nn.Tanh())
head_a, head_b = nn.Linear(4, 1), nn.Linear(4, 1)
optimizer = torch.optim.SGD([*backbone.parameters(), *head_a.parameters(),
                             *head_b.parameters()], lr=0.1)
PERIOD = {period}
for i in range(6):
    feats = backbone(torch.randn(3, 4))
    if i % PERIOD == 0:
        head_a(feats).pow(2).mean().backward()
    if i % PERIOD == PERIOD - 1:
        head_b(feats).pow(2).mean().backward()
    optimizer.step()
    optimizer.zero_grad()
"""


@pytest.mark.parametrize("period", ["1", "args.task_period"], ids=["constant", "setting"])
def test_a_period_of_one_puts_both_windows_in_every_iteration(period, tmp_path):
    """A modulus bound once to 1 is read as 1; one that is a setting may be 1 (a run where
    every periodic test takes its value at k == 1 is followed beside the others)."""
    source = ALTERNATING_TASKS.format(period=period)
    run = run_script(source, tmp_path)
    assert "backward through the graph a second time" in run.stderr
    assert rules_reported(source) == ["LF003"]


def test_a_period_above_one_alternates_the_windows(tmp_path):
    source = ALTERNATING_TASKS.format(period="2")
    run = run_script(source, tmp_path)
    assert run.returncode == 0, run.stderr[-2000:]
    assert rules_reported(source) == []


@pytest.mark.parametrize(
    ("test", "first", "last"),
    [
        ("t == n - 1", True, None),
        ("t < n - 1", False, None),
        ("t == 0", None, True),
        ("t > 0", None, False),
    ],
)
def test_a_reversed_range_counts_down(test, first, last):
    """`for t in reversed(range(n))`: `t == n - 1` is the first iteration, `t == 0` the last
    (GAE and returns computed backwards: `if t == num_steps - 1: next_value = last_value`)."""
    loop = (
        "for t in reversed(range(n)):\n    if t == n - 1:\n        pass\n"
        f"    if {test}:\n        pass\n    if t == 0:\n        pass\n"
    )
    counter = counter_of(loop)
    assert counter.descending
    parsed = ast.parse(test, mode="eval").body
    assert (counter.first_of(parsed), counter.last_of(parsed)) == (first, last)


@settings(deadline=None)
@given(n=st.integers(1, 10))
def test_a_reversed_range_is_followed_from_its_top_to_zero(n):
    tests = ["t == n - 1", "t == 0"]
    loop = "for t in reversed(range(n)):\n" + "".join(f"    if {t}:\n        pass\n" for t in tests)
    counter = counter_of(loop)
    parsed = [ast.parse(t, mode="eval").body for t in tests]
    offered = counter.initials()
    for t in reversed(range(n)):
        real = (t == n - 1, t == 0)
        matching = [p for p in offered if tuple(counter.holds(e, p) for e in parsed) == real]
        assert matching, (t, offered)
        offered = [q for p in matching for q in counter.successors(p)]
    assert offered == []


GRADIENT_PER_TASK = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
trunk = nn.Linear(8, 16)
heads = nn.ModuleList([nn.Linear(16, 1) for _ in range({count})])
optimizer = torch.optim.Adam([*trunk.parameters(), *heads.parameters()], lr=1e-3)
for k in range(3):
    feat = torch.relu(trunk(torch.randn(5, 8)))
    losses = [heads[i](feat).pow(2).mean() for i in range({count})]
    optimizer.zero_grad()
    for i in range({count}):
        if {test}:
            losses[i].backward(retain_graph=True)
        else:
            losses[i].backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "count, test, raises",
    [
        (2, "i == 0", False),  # CAGrad's graddrop on two tasks: the last backward frees
        (3, "i < 2", False),
        (3, "i != 2", False),
        (4, "i <= 2", False),
        (3, "i < 3", False),  # CAGrad on three tasks: the `else` never runs
        (3, "i == 0", True),  # controls: a plain backward before the last one
        (2, "i == 1", True),
        (4, "i >= 3", True),
    ],
)
def test_a_loop_over_integers_knows_its_last_iteration(count, test, raises, tmp_path):
    """`for i in range(n)` with integers runs n times: a test of `i` against an integer that
    every iteration answers alike decides its branch, and the iteration after the first is
    the last when n is 2 (per-task gradients, as CAGrad and PCGrad take them, keep the
    shared graph on every backward but the last)."""
    source = GRADIENT_PER_TASK.format(count=count, test=test)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert sorted(set(rules_reported(source))) == (["LF003"] if raises else [])


def test_the_phases_of_a_loop_of_known_length_end_at_its_last_iteration():
    two = counter_of("for i in range(2):\n    if i == 0:\n        pass\n")
    assert two.count == 2
    (first,) = two.initials()
    assert first.first and not first.last
    assert [p.last for p in two.successors(first)] == [True]
    four = counter_of("for i in range(1, 5):\n    if i == 1:\n        pass\n")
    later = [p for p in four.successors(four.initials()[0])]
    assert [p.last for p in later] == [False]
    assert sorted(p.last for p in four.successors(later[0])) == [False, True]
    assert counter_of("for i in range(n):\n    if i == 0:\n        pass\n").count is None
