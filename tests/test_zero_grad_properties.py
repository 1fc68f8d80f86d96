"""LF007 over generated loops: where `zero_grad()` sits relative to the backward and the
(possibly guarded) step decides the finding; each fix parses, removes it, and is stable."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

HEADER = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""
FORWARD = "loss = model(torch.randn(2, 4)).pow(2).mean()"


@st.composite
def loops(draw):
    # where the zero goes among [forward, backward, step] (None: nowhere); the step guarded?
    place = draw(st.sampled_from(["top", "before_backward", "between", "after_step", None]))
    guarded = draw(st.booleans())
    zero = "optimizer.zero_grad()"
    step = ["if (i + 1) % 2 == 0:", "    optimizer.step()"] if guarded else ["optimizer.step()"]
    if place == "after_step" and guarded:
        step = [*step, f"    {zero}"]
    body = [
        *([zero] if place == "top" else []),
        FORWARD,
        *([zero] if place == "before_backward" else []),
        "loss.backward()",
        *([zero] if place == "between" else []),
        *step,
        *([zero] if place == "after_step" and not guarded else []),
    ]
    text = HEADER + "for i in range(4):\n" + "".join(f"    {line}\n" for line in body)
    # guarded: cleared every micro-batch; a zero outside the `if` after the backward, or none
    # at all, under a guarded step is left alone (not a shape this rule proves)
    reported = ("top", "before_backward") if guarded else ("between", None)
    expected = place in reported
    return text, expected


@settings(max_examples=60, deadline=None)
@given(loops())
def test_a_misplaced_zero_grad_is_reported_and_fixed(case):
    text, expected = case
    result = analyse_source(SourceFile.from_text("train.py", text), project=None)
    assert [f.rule for f in result.findings] == (["LF007"] if expected else []), text
    if expected:
        assert result.changed
        fixed = analyse_source(SourceFile.from_text("train.py", result.fixed_text), project=None)
        assert fixed.findings == [] and fixed.fixed_text == result.fixed_text, result.fixed_text
