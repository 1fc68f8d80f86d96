"""A test repeated in one iteration of a `for` loop that reads the loop's target, and that
nothing in the body changes, takes one value in the whole iteration (Person_reID's
`if opt.adv > 0 and step % opt.aiter == 0:` where the adversarial output is made and again
where its loss is added), though it changes from one iteration to the next
(`conditions.iteration_splits`). Each program is run for the truth."""

from __future__ import annotations

import ast

import pytest
from scripts import rules_reported, run_script

from loopfix.model.conditions import iteration_splits, unnegated

ADVERSARIAL_EVERY_K = """\
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--adv", type=float, default=0.5)
parser.add_argument("--aiter", type=int, default=2)
opt = parser.parse_args([])

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 4))
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    for step in range(5):
        inputs, labels = torch.randn(5, 6), torch.randint(0, 4, (5,))
        optimizer.zero_grad()
        outputs = model(inputs)
        if opt.adv > 0 and step % opt.aiter == 0:
            outputs_adv = model((inputs + 0.01 * torch.randn_like(inputs)).detach())
{between}        loss = criterion(outputs, labels)
        if opt.adv > 0 and {read_test}:
            loss = loss + opt.adv * criterion(outputs_adv, labels)
        loss.backward()
        optimizer.step()
"""
CASES = {  # -> (what goes between the tests, the second test, whether it fails)
    "same test": ("", "step % opt.aiter == 0", False),
    "another test": ("", "step % opt.aiter == 1", True),
    "target changed between": ("        step = step + 1\n", "step % opt.aiter == 0", True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_test_an_iteration_keeps_correlates_where_a_value_is_made_and_used(tmp_path, case):
    """The same test where `outputs_adv` is made and where it is used: every iteration that
    reads it made it (no graph crosses iterations). Read under another test, or after the
    body changed what the test reads, it is the previous iteration's, made before the step:
    the run fails on it, and LF001 says so."""
    between, read_test, fails = CASES[case]
    text = ADVERSARIAL_EVERY_K.format(between=between, read_test=read_test)
    run = run_script(text, tmp_path)
    assert ("modified by an inplace operation" in run.stderr) is fails, run.stderr
    assert ("LF001" in rules_reported(text)) is fails


def test_only_tests_of_the_loop_target_split_an_iteration():
    """A repeated test that does not read the target is the loop's to split (the same value
    in every iteration), not the iteration's."""
    loop = ast.parse(
        "for step in range(5):\n"
        "    if args.aux:\n        a = f(step)\n"
        "    if args.aux:\n        g(a)\n"
        "    if step % 2 == 0:\n        b = f(step)\n"
        "    if step % 2 == 0:\n        g(b)\n"
    ).body[0]
    key = unnegated(ast.parse("step % 2 == 0", mode="eval").body)[0]
    assert iteration_splits(loop) == [({key: True}, {key: False})]
