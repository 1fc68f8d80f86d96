"""LF009 over generated GAN iterations: whether the discriminator's loss reads the fake
detached, where each optimizer's gradients are cleared, the order of the updates, and
`inputs=` decide whether a backward's gradients end up in two optimizers' steps. Each loop is
run (in this process, with backward, step and zero_grad observed) and LF009 must report exactly
the loops where that happens; its fix must leave no backward feeding two steps."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

import torch
from hypothesis import event, given, settings
from hypothesis import strategies as st

from loopfix.analysis import analyse_source
from loopfix.rules.lf009_gradient_leak import shared_backwards
from loopfix.source import SourceFile

HEADER = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 4))
discriminator = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
optimizer_g = torch.optim.SGD(generator.parameters(), lr=0.1)
optimizer_d = torch.optim.SGD(discriminator.parameters(), lr=0.1)

for real in [torch.randn(5, 4) for _ in range(2)]:
"""


@st.composite
def loops(draw):
    detach = draw(st.booleans())
    restrict = draw(st.booleans())
    clearing = draw(st.sampled_from(["top", "each", "g_top"]))
    d_first = draw(st.booleans())
    interleaved = draw(st.booleans())
    fake = "fake.detach()" if detach else "fake"
    inputs = ", inputs=list(discriminator.parameters())" if restrict else ""
    top = []
    if clearing in ("top", "g_top"):
        top.append("optimizer_g.zero_grad()")
    if clearing == "top":
        top.append("optimizer_d.zero_grad()")
    d_update = [
        *(["optimizer_d.zero_grad()"] if clearing != "top" else []),
        f"d_loss = discriminator(real).mean() - discriminator({fake}).mean()",
        f"d_loss.backward(retain_graph=True{inputs})",
    ]
    g_update = [
        *(["optimizer_g.zero_grad()"] if clearing == "each" else []),
        "g_loss = -discriminator(fake).mean()",
        "g_loss.backward(retain_graph=True)",
    ]
    first, second = (d_update, g_update) if d_first else (g_update, d_update)
    first_step, second_step = (
        ("optimizer_d.step()", "optimizer_g.step()")
        if d_first
        else ("optimizer_g.step()", "optimizer_d.step()")
    )
    if interleaved:
        body = [*top, "fake = generator(torch.randn(5, 3))", *first, first_step, *second]
        body.append(second_step)
    else:
        body = [*top, "fake = generator(torch.randn(5, 3))", *first, *second]
        body += [first_step, second_step]
    # the code pairs each backward with one optimizer: its own step right after it, or its
    # own zero_grad alone right before it
    determined = interleaved or clearing == "each"
    return HEADER + "".join(f"    {line}\n" for line in body), determined


@contextmanager
def observed(events: list):
    """Record backward and step events as the tracer does (see `shared_backwards`)."""
    backward, step = torch.Tensor.backward, torch.optim.SGD.step
    parameters: list = []
    sources: list[int] = []

    def grads():
        return [None if p.grad is None else p.grad.clone() for p in parameters]

    def traced_backward(tensor, *args, **kwargs):
        sources.append(sys._getframe(1).f_lineno)  # which loss: its line in the loop
        before = grads()
        backward(tensor, *args, **kwargs)
        after = grads()
        reached = [k for k, (a, b) in enumerate(zip(before, after, strict=True)) if _changed(a, b)]
        started = [k for k in reached if before[k] is None or not bool(before[k].any())]
        events.append(("backward", None, None, None, reached, False, started))

    def traced_step(optimizer, *args, **kwargs):
        own = {id(p) for group in optimizer.param_groups for p in group["params"]}
        positions = [k for k, p in enumerate(parameters) if id(p) in own]
        index = getattr(optimizer, "_loopfix_index", None)
        if index is None:
            index = optimizer._loopfix_index = len({e[3] for e in events if e[0] == "step"})
        events.append(("step", None, None, index, None, positions))
        return step(optimizer, *args, **kwargs)

    torch.Tensor.backward, torch.optim.SGD.step = traced_backward, traced_step
    try:
        yield parameters, sources
    finally:
        torch.Tensor.backward, torch.optim.SGD.step = backward, step


def _changed(before, after) -> bool:
    if after is None:
        return False
    return before is None or not torch.equal(before, after)


def run(text: str) -> dict[str, list[int]] | None:
    """The losses whose backward's gradients two optimizers stepped with (by name:
    "d_loss", "g_loss"), with those optimizers; None when the loop fails (a backward through
    weights a step changed: LF002's bug, not this one's)."""
    events: list = []
    code = compile(text, "<generated>", "exec")
    namespace: dict = {"__name__": "generated"}
    lines = text.splitlines()
    with observed(events) as (parameters, sources):
        original_linear = torch.nn.Linear.__init__

        def remembered(self, *args, **kwargs):
            original_linear(self, *args, **kwargs)
            parameters.extend(self.parameters())

        torch.nn.Linear.__init__ = remembered
        try:
            exec(code, namespace)  # noqa: S102 - our own generated source
        except RuntimeError as error:
            if "modified by an inplace operation" not in str(error):
                raise
            return None
        finally:
            torch.nn.Linear.__init__ = original_linear
    backwards = [i for i, e in enumerate(events) if e[0] == "backward"]
    pairs = zip(backwards, sources, strict=True)
    names = {i: lines[line - 1].split(".backward")[0].strip() for i, line in pairs}
    return {names[b]: optimizers for b, optimizers in shared_backwards(events).items()}


@settings(max_examples=80, deadline=None)
@given(loops())
def test_a_leak_is_reported_exactly_when_a_backward_feeds_two_steps(loop):
    """Every report is a real leak. The discriminator's loss leaking into the generator (which
    it reaches only behind the discriminator) is reported wherever the code pairs each
    backward with one optimizer; elsewhere (all backwards before all steps after clearing
    both) which loss is whose is not in the code, and LF009 stays silent. The generator's loss
    reaches the discriminator directly, as a loss meant for both networks would: its leak is
    not required."""
    text, determined = loop
    result = analyse_source(SourceFile.from_text(Path("gan.py"), text))
    assert result.errors == []
    reported = [f for f in result.findings if f.rule == "LF009"]
    leaks = run(text)
    if leaks is None:
        event("fails (LF002)")
        return
    event("leak" if leaks else "no leak")
    event("reported" if reported else "silent")
    assert not reported or leaks, text
    if determined and "d_loss" in leaks:
        assert reported, text
    if reported and result.fixed_text != text:
        fixed = run(result.fixed_text)
        assert fixed is not None and "d_loss" not in fixed, result.fixed_text
