"""LF005 over generated training loops: where the scheduler's `step()` sits (before or after
its optimizer's, in the batch loop or the epoch loop, guarded or not, with or without an
argument) decides the finding; the fix parses, removes the finding, changes nothing a second
time, and keeps every line it does not move."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

HEADER = """\
import torch
import torch.nn as nn

model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
scheduler = torch.optim.lr_scheduler.{kind}(optimizer, {arguments})
"""
KINDS = {
    "StepLR": "step_size=1",
    "ExponentialLR": "gamma=0.9",
    "OneCycleLR": "max_lr=0.5, total_steps=100",
}
BATCH = [
    "optimizer.zero_grad()",
    "loss = model(torch.randn(3, 4)).pow(2).mean()",
    "loss.backward()",
    "optimizer.step()",
]


@st.composite
def loops(draw):
    kind = draw(st.sampled_from(sorted(KINDS)))
    per_epoch = draw(st.booleans())
    position = draw(st.integers(0, len(BATCH)))  # where in the batch body (per batch)
    early = draw(st.booleans())  # per epoch: before or after the batch loop
    guarded = draw(st.booleans())
    with_argument = draw(st.booleans()) and kind == "StepLR"
    call = "scheduler.step(epoch)" if with_argument else "scheduler.step()"
    step = ["if epoch > 0:", f"    {call}"] if guarded else [call]
    if per_epoch:
        body = [f"    {line}" for line in BATCH]
        inner = ["for batch in range(2):", *body]
        epoch_body = [*step, *inner] if early else [*inner, *step]
        buggy = early and not guarded and not with_argument
    else:
        batch = [*BATCH[:position], *step, *BATCH[position:]]
        epoch_body = ["for batch in range(2):", *[f"    {line}" for line in batch]]
        buggy = position < len(BATCH) and not guarded and not with_argument
    lines = ["for epoch in range(3):", *[f"    {line}" for line in epoch_body]]
    text = HEADER.format(kind=kind, arguments=KINDS[kind]) + "\n".join(lines) + "\n"
    return text, buggy


def analyse(text: str):
    return analyse_source(SourceFile.from_text("train.py", text), project=None)


@settings(max_examples=60, deadline=None)
@given(loops())
def test_the_scheduler_is_reported_exactly_when_it_steps_before_its_optimizer(case):
    text, buggy = case
    result = analyse(text)
    assert [f.rule for f in result.findings] == (["LF005"] if buggy else []), text
    if not buggy:
        return
    assert result.changed
    fixed = analyse(result.fixed_text)
    assert fixed.findings == [] and fixed.fixed_text == result.fixed_text
    # the fix only moves the scheduler's line: the other lines keep their order
    others = [line for line in text.splitlines() if "scheduler.step" not in line]
    assert [line for line in result.fixed_text.splitlines() if "scheduler.step" not in line] == (
        others
    )
