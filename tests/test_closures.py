"""A function defined inside the function being run (`def zero_grad_all():` in SSDA_MME's
`train()`) runs where it is called, as a closure: the names it does not bind are the
enclosing function's, and a `nonlocal` name it rebinds is the enclosing one. Each program is
run for the truth."""

from __future__ import annotations

import pytest
from scripts import rules_reported, run_script

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

# `clear_grads()` clears `optimizer_g` (and `optimizer_f` where the case says so); the
# script prints, per step, whether each optimizer stepped with this batch's gradient only
TWO_OPTIMIZERS = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Linear(6, 8)
F1 = nn.Linear(8, 4)


def fresh_gradient(x, weight):
    return torch.autograd.grad(F1(G(x)).pow(2).mean(), weight)[0]


def train(steps=3):
    optimizer_g = torch.optim.SGD(G.parameters(), lr=0.0)
    optimizer_f = torch.optim.SGD(F1.parameters(), lr=0.0)

    def clear_grads():
{clears}
    for step in range(steps):
        clear_grads()
        x = torch.randn(4, 6)
        loss = F1(G(x)).pow(2).mean()
        loss.backward()
        print("g", torch.allclose(G.weight.grad, fresh_gradient(x, G.weight)))
        print("f", torch.allclose(F1.weight.grad, fresh_gradient(x, F1.weight)))
        optimizer_g.step()
        optimizer_f.step()


train()
"""
CLEARS = {
    "both": "        optimizer_g.zero_grad()\n        optimizer_f.zero_grad()\n",
    "nothing": "        pass\n",
}


@pytest.mark.parametrize("clears", list(CLEARS))
def test_a_nested_helper_clears_the_enclosing_functions_optimizers(tmp_path, clears):
    """Both optimizers cleared by the closure: each step uses its own batch's gradient, and
    nothing is reported. A closure that clears nothing: both optimizers' gradients pile up,
    and both steps are reported."""
    text = TWO_OPTIMIZERS.replace("{clears}", CLEARS[clears])
    run = run_script(text, tmp_path)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.split()
    fresh = set(lines[1::2])
    assert fresh == ({"True"} if clears == "both" else {"True", "False"})
    findings = analyse_source(SourceFile.from_bytes("train.py", text.encode())).findings
    stepped = [f.message.split("`")[1] for f in findings if f.rule == "LF007"]
    expected = ["optimizer_g.step()", "optimizer_f.step()"]
    assert stepped == ([] if clears == "both" else expected)


CLEARED_BETWEEN = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 1)


def train(steps=3):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    start = model.weight.detach().clone()

    def clear():
        optimizer.zero_grad()

    for _ in range(steps):
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        clear()
        optimizer.step()
    print(torch.equal(start, model.weight))


train()
"""


def test_a_nested_helper_clearing_between_backward_and_step_is_reported_at_its_call(tmp_path):
    """Every step sees zero gradients: reported at the closure's call, without a fix (not as
    a step whose gradients are never cleared, whose fix would add a `zero_grad()`)."""
    run = run_script(CLEARED_BETWEEN, tmp_path)
    assert run.stdout.split() == ["True"]  # the weights never moved
    source = SourceFile.from_bytes("train.py", CLEARED_BETWEEN.encode())
    (finding,) = analyse_source(source).findings
    assert finding.rule == "LF007" and not finding.fixable
    assert CLEARED_BETWEEN[finding.start :].startswith("clear()")


# `fit()` is a method called from `main()` (its names are a callee frame's); `repackage()`
# rebinds the enclosing `hidden` through `nonlocal`
STATE_HELPER = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.rnn = nn.GRU(4, 8)
        self.head = nn.Linear(8, 1)
        params = [*self.rnn.parameters(), *self.head.parameters()]
        self.optimizer = torch.optim.SGD(params, lr=0.1)

    def fit(self, batches):
        hidden = torch.zeros(1, 2, 8)

        {decorator}def repackage():
            nonlocal hidden
            hidden = {cut}

        for x in batches:
            repackage()
            out, hidden = self.rnn(x, hidden)
            loss = self.head(out).pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()


def main():
    Trainer().fit([torch.randn(3, 2, 4) for _ in range(4)])


main()
"""


@pytest.mark.parametrize(
    ("cut", "fails"), [("hidden.detach()", False), ("hidden", True)], ids=["detach", "none"]
)
def test_a_nested_helper_rebinds_the_enclosing_state(tmp_path, cut, fails):
    text = STATE_HELPER.replace("{decorator}", "").replace("{cut}", cut)
    run = run_script(text, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is fails, run.stderr
    assert ("LF001" in rules_reported(text)) is fails


def test_a_nested_helper_behind_an_unknown_decorator_is_not_followed():
    """A decorator may wrap the function in anything: its call is not run as the closure,
    and the state's detach in it is not taken as done."""
    text = STATE_HELPER.replace("{decorator}", "@log_calls\n        ")
    text = text.replace("{cut}", "hidden.detach()")
    text = text.replace("class Trainer", "def log_calls(f):\n    return f\n\n\nclass Trainer")
    assert "LF001" in rules_reported(text)


PENALTY_READS_STATE = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
rnn, head = nn.GRU(4, 8), nn.Linear(8, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
hidden = torch.zeros(1, 2, 8)
{penalty}
for x in [torch.randn(3, 2, 4) for _ in range(4)]:
    out, hidden = rnn(x, hidden)
    loss = head(out).pow(2).mean() + activation_penalty()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
PENALTIES = {
    "function": "def activation_penalty():\n    return 0.5 * hidden.pow(2).mean()\n",
    "lambda": "activation_penalty = lambda: 0.5 * hidden.pow(2).mean()\n",
}


@pytest.mark.parametrize("penalty", list(PENALTIES))
def test_a_state_read_by_a_function_of_the_file_is_detached_before_the_forward(penalty):
    """`activation_penalty()` reads the module's `hidden` after the forward: a detach right
    after the forward would cut the penalty's gradient through this batch's state, so the
    fix detaches it before the forward."""
    text = PENALTY_READS_STATE.replace("{penalty}", PENALTIES[penalty])
    result = analyse_source(SourceFile.from_bytes("train.py", text.encode()))
    assert [f.rule for f in result.findings] == ["LF001"]
    assert "    hidden = hidden.detach()\n    out, hidden = rnn(x, hidden)\n" in result.fixed_text
