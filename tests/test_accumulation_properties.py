"""LF006 over generated loops: a total or a history that outlives the iteration is reported
exactly when what is added still carries graph and the total is only logged afterwards; the
fix parses, removes the finding, changes nothing the second time, and touches one line."""

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
ADD = {
    "augmented": ("total = 0.0", "total += {value}"),
    "rebinding": ("total = 0", "total = total + {value}"),
    "history": ("total = []", "total.append({value})"),
    "dict entry": ("total = {{'loss': 0.0, 'n': 0}}", "total['loss'] += {value}"),
    "history entry": ("total = {{'loss': []}}", "total['loss'].append({value})"),
}
VALUES = {"loss": True, "loss.item()": False, "loss.detach()": False, "2 * loss": True}
USES = {
    "print(total)": True,
    "print(f'{{total}}')": True,
    "logger_value = float(len(str(total)))": True,
    "result = total": False,
    "torch.save(total, 'total.pt')": False,
}


@st.composite
def loops(draw):
    kind = draw(st.sampled_from(sorted(ADD)))
    value = draw(st.sampled_from(sorted(VALUES)))
    use = draw(st.sampled_from(sorted(USES)))
    start, add = ADD[kind]
    lines = [
        start.format(),
        "for step in range(3):",
        "    loss = model(torch.randn(2, 4)).pow(2).mean()",
        "    optimizer.zero_grad()",
        "    loss.backward()",
        "    optimizer.step()",
        "    " + add.format(value=value),
        use.replace("{{", "{").replace("}}", "}"),
    ]
    return HEADER + "\n".join(lines) + "\n", VALUES[value] and USES[use]


@settings(max_examples=60, deadline=None)
@given(loops())
def test_a_logged_total_is_reported_exactly_when_it_keeps_graph(case):
    text, reported = case
    result = analyse_source(SourceFile.from_text("train.py", text), project=None)
    assert [f.rule for f in result.findings] == (["LF006"] if reported else []), text
    if not reported:
        return
    fixed = analyse_source(SourceFile.from_text("train.py", result.fixed_text), project=None)
    assert fixed.findings == [] and fixed.fixed_text == result.fixed_text
    changed = [
        (a, b)
        for a, b in zip(text.splitlines(), result.fixed_text.splitlines(), strict=True)
        if a != b
    ]
    assert (
        len(changed) == 1
        and changed[0][1].endswith(".detach())")
        or (len(changed) == 1 and ".detach()" in changed[0][1])
    )


def test_a_loss_from_a_model_passed_in_counts_because_it_is_backwarded():
    """`train_epoch(model, ...)` with no caller in the file: the loss comes from code loopfix
    cannot see, but `loss.backward()` shows it carries a graph (the SR-GNN / GCE-GNN shape)."""
    text = (
        "def train_epoch(model, optimizer, loss_fn, loader):\n"
        "    total_loss = 0.0\n"
        "    for x, y in loader:\n"
        "        optimizer.zero_grad()\n"
        "        loss = loss_fn(model(x), y)\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        "        total_loss += loss\n"
        "    print('loss %.3f' % total_loss)\n"
    )
    result = analyse_source(SourceFile.from_text("train.py", text), project=None)
    assert [f.rule for f in result.findings] == ["LF006"]
    assert "total_loss += loss.detach()" in result.fixed_text
    unknown = text.replace("        loss.backward()\n", "        loss_fn.update(loss)\n")
    quiet = analyse_source(SourceFile.from_text("train.py", unknown), project=None)
    assert quiet.findings == []  # nothing shows that this loss carries a graph


NETWORKS = """\
nets = [nn.Linear(4, 1), nn.Linear(4, 1)]
optimizers = [torch.optim.SGD(net.parameters(), lr=0.1) for net in nets]
"""
# an inner loop's header, and how its body names the network and the optimizer; True when
# the loop walks the networks (its length is fixed when they are built), not data
INNER = {
    "for i in range(len(nets)):": ("nets[i]", "optimizers[i]", True),
    "for net, opt in zip(nets, optimizers):": ("net", "opt", True),
    "for i, net in enumerate(nets):": ("net", "optimizers[i]", True),
    "for i in range(2):": ("nets[i]", "optimizers[i]", True),  # its counter picks networks
    "for i in range(2):  # micro-batches": ("nets[0]", "optimizers[0]", False),
    "for piece in torch.randn(2, 4).split(1):": ("nets[0]", "optimizers[0]", False),
}
# a step of the loop around the inner one, outside it: its iterations are the steps
OUTER_STEP = """\
    extra = nets[0](x).pow(2).mean()
    optimizers[0].zero_grad()
    extra.backward()
    optimizers[0].step()"""


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(INNER)), st.sampled_from(["run", "step"]), st.booleans())
def test_a_total_over_the_networks_reset_each_step_is_not_reported(inner, reset, outer_step):
    """AttnGAN's discriminator total: reset in every step and added to in a loop over the
    networks, or in a loop of micro-batches inside a loop that steps by itself, it holds one
    step's graphs and is not reported; reset once per run, or added to in an inner loop over
    data with no step of its own around it, it grows with the steps and is."""
    net, opt, walks_models = INNER[inner]
    lines = [
        *(["total = 0.0"] if reset == "run" else []),
        "for step in range(3):",
        *(["    total = 0.0"] if reset == "step" else []),
        "    x = torch.randn(2, 4)",
        f"    {inner}",
        f"        loss = {net}(x).pow(2).mean()",
        f"        {opt}.zero_grad()",
        "        loss.backward()",
        f"        {opt}.step()",
        "        total += loss",
        *([OUTER_STEP] if outer_step else []),
        "    print(total)",
    ]
    text = HEADER + NETWORKS + "\n".join(lines) + "\n"
    exec(compile(text, "train.py", "exec"), {})  # the case runs as written
    reported = reset == "run" or not (walks_models or outer_step)
    result = analyse_source(SourceFile.from_text("train.py", text), project=None)
    assert [f.rule for f in result.findings] == (["LF006"] if reported else []), text


# how the training loop calls `evaluate()`: whether its losses carry graph there
CALLS = {
    "    evaluate()": True,
    "    with torch.no_grad():\n        evaluate()": False,
    "    with torch.inference_mode():\n        evaluate()": False,
    "    with torch.set_grad_enabled(False):\n        evaluate()": False,
}
DECORATORS = {
    "": True,
    "@torch.no_grad()\n": False,
    "evaluation = torch.no_grad()\n\n\n@evaluation\n": False,
    "@torch.set_grad_enabled(False)\n": False,
    "@torch.set_grad_enabled(mode=False)\n": False,
    "@torch.set_grad_enabled(True)\n": True,
}


def test_set_grad_enabled_as_a_decorator_sets_the_mode_for_the_call():
    """What `DECORATORS` takes `@torch.set_grad_enabled(False)` to do, run."""
    import torch

    weight = torch.ones(2, requires_grad=True)

    @torch.set_grad_enabled(False)
    def off():
        return weight * 2

    @torch.set_grad_enabled(True)
    def on():
        return weight * 2

    assert not off().requires_grad and on().requires_grad


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(sorted(ADD)),
    st.sampled_from(sorted(CALLS)),
    st.sampled_from(sorted(DECORATORS)),
    st.sampled_from(["print(total)", "result = total"]),
)
def test_an_evaluation_total_is_reported_when_the_training_loop_calls_it_with_grad(
    kind, call, decorator, use
):
    """An `evaluate()` with no backward of its own, called after each epoch: its logged total
    keeps every batch's graph exactly when the call runs with grad enabled."""
    start, add = ADD[kind]
    text = HEADER + (
        f"{decorator}def evaluate():\n"
        "    model.eval()\n"
        f"    {start.format()}\n"
        "    for step in range(3):\n"
        "        loss = model(torch.randn(2, 4)).pow(2).mean()\n"
        f"        {add.format(value='loss')}\n"
        f"    {use}\n"
        "    model.train()\n"
        "    return None\n"
        "\n\n"
        "for epoch in range(2):\n"
        "    for step in range(3):\n"
        "        loss = model(torch.randn(2, 4)).pow(2).mean()\n"
        "        optimizer.zero_grad()\n"
        "        loss.backward()\n"
        "        optimizer.step()\n"
        f"{call}\n"
    )
    reported = CALLS[call] and DECORATORS[decorator] and use.startswith("print")
    result = analyse_source(SourceFile.from_text("train.py", text), project=None)
    assert [f.rule for f in result.findings] == (["LF006"] if reported else []), text
    if reported:
        fixed = analyse_source(SourceFile.from_text("train.py", result.fixed_text), project=None)
        assert fixed.findings == [] and ".detach()" in result.fixed_text
