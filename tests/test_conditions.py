"""Tests a loop cannot change (`model.conditions`): which are taken to have one value for the
whole loop, and what the loop model concludes from it. Claims about scripts are run."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from scripts import rules_reported, run_script

from loopfix.model.conditions import invariant_splits, invariant_tests, unnegated

from corpus_cases import CORPUS


def keys_of(loop_source: str) -> list[str]:
    return invariant_tests(ast.parse(textwrap.dedent(loop_source)).body[0])


def key(test: str) -> str:
    return unnegated(ast.parse(test, mode="eval").body)[0]


def test_a_test_repeated_with_nothing_in_the_loop_changing_it_is_invariant():
    loop = """
        for x in loader:
            if args.aux:
                a = f(x)
            if not args.aux:
                pass
            y = a if args.aux else x
    """
    assert keys_of(loop) == [key("args.aux")]


@pytest.mark.parametrize(
    "loop",
    [
        # tested once: nothing to correlate
        "for x in loader:\n    if flag:\n        a = f(x)\n",
        # the loop changes what it reads
        "for x in loader:\n    if flag:\n        flag = False\n    if flag:\n        pass\n",
        "for x in xs:\n    if cfg.aux:\n        cfg.aux = 0\n    if cfg.aux:\n        pass\n",
        "for x in xs:\n    if cfg.aux:\n        cfg = g()\n    if cfg.aux:\n        pass\n",
        # the loop's own target changes every iteration
        "for x in xs:\n    if x > 0:\n        pass\n    if x > 0:\n        pass\n",
        # a call or a subscript may give another value each time
        "for x in xs:\n    if ready():\n        pass\n    if ready():\n        pass\n",
        "for x in xs:\n    if d['k']:\n        pass\n    if d['k']:\n        pass\n",
    ],
    ids=["once", "reassigned", "attribute_set", "root_rebound", "target", "call", "subscript"],
)
def test_tests_the_loop_may_change_are_not_invariant(loop):
    assert keys_of(loop) == []


def test_at_most_three_tests_split_a_loop():
    body = "".join(f"    if f{i}:\n        pass\n    if f{i}:\n        pass\n" for i in range(4))
    assert keys_of("for x in xs:\n" + body) == [key("f0"), key("f1"), key("f2")]


# The auxiliary output is computed under one flag and read under another: with `aux` on and
# `detach_aux` off, every iteration after the first reads the first iteration's output.
TWO_FLAGS = """
import torch
import torch.nn as nn

torch.manual_seed(0)
aux, stale = True, True
backbone, aux_head = nn.Linear(4, 4), nn.Linear(4, 1)
optimizer = torch.optim.SGD([*backbone.parameters(), *aux_head.parameters()], lr=0.1)
for step in range(3):
    feat = backbone(torch.randn(2, 4))
    if aux and not stale:
        aux_out = aux_head(feat)
    if step == 0:
        aux_out = aux_head(feat)
    loss = feat.pow(2).mean()
    if aux:
        loss = loss + aux_out.mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_read_under_a_flag_the_write_does_not_share_is_still_found(tmp_path):
    run = run_script(TWO_FLAGS, tmp_path)
    assert "backward through the graph a second time" in run.stderr
    assert rules_reported(TWO_FLAGS) == ["LF001"]


@pytest.mark.parametrize(
    ("before", "inside"),
    [
        ("", "    args.toggle()\n"),
        ("", "    toggle(args)\n"),
        ("", "    setattr(args, 'aux', False)\n"),
        ("", "    alias = args\n"),
        ("alias = args\n", "    alias.aux = False\n"),
        ("", "    args.step += 1\n"),  # `aux` may be a property of `step`
        ("", "    d = vars(args)\n"),  # the namespace itself, which its user may change
    ],
    ids=["method", "passed", "setattr", "aliased", "alias_before", "property", "vars"],
)
def test_a_test_of_what_the_loop_hands_to_other_code_is_not_invariant(before, inside):
    loop = (
        "for x in xs:\n    if args.aux:\n        a = f(x)\n    if args.aux:\n        g(a)\n"
        + inside
    )
    module = ast.parse(before + loop)
    assert invariant_tests(module.body[-1]) == []


@pytest.mark.parametrize(
    "inside",
    [
        "    print(args)\n",
        "    text = repr(args)\n",
        "    text = f'{args}'\n",
        "    k = int(args.every) + len(args.name)\n",
        "    ok = hasattr(args, 'aux') and isinstance(args.every, int)\n",
    ],
    ids=["print", "repr", "fstring", "int_len", "hasattr"],
)
def test_python_builtins_that_only_read_leave_a_setting_invariant(inside):
    """Person_reID logs `opt` between its two tests: printing, formatting or converting a
    setting reads it and changes nothing."""
    loop = (
        "for x in xs:\n    if args.aux:\n        a = f(x)\n    if args.aux:\n        g(a)\n"
        + inside
    )
    assert invariant_tests(ast.parse(loop).body[0]) == [key("args.aux")]


def test_a_name_a_function_declares_global_is_not_invariant():
    loop = ast.parse("for x in xs:\n    if aux:\n        a = f(x)\n    if aux:\n        g(a)\n")
    assert invariant_tests(loop.body[0]) == [key("aux")]
    assert invariant_tests(loop.body[0], rebound=frozenset({"aux"})) == []


@pytest.mark.parametrize(
    "inside",
    ["    x_r, y_r = replay\n", "    consume(replay)\n", "    replay.pop()\n"],
    ids=["unpacked", "passed", "method"],
)
def test_whether_a_name_is_none_changes_only_where_it_is_assigned(inside):
    """Code a name is handed to may change what the object holds, not make the name None."""
    loop = (
        "for x in xs:\n    if replay is not None:\n        a = f(x)\n"
        + inside
        + "    if replay is not None:\n        g(a)\n"
    )
    assert keys_of(loop) == [key("replay is not None")]
    assert keys_of(loop.replace("replay is not None", "None is replay")) == [key("None is replay")]


@pytest.mark.parametrize(
    ("test", "inside", "rebound"),
    [
        ("r is None", "r = f(x)", ()),
        ("r is None", "del r", ()),
        ("r is None", "pass", ("r",)),
        ("r is None or r.done", "g(r)", ()),  # the test reads more than whether it is None
        ("s.r is None", "g(s)", ()),
    ],
    ids=["assigned", "deleted", "global", "attribute_read_too", "attribute"],
)
def test_a_none_check_the_loop_may_change_is_not_invariant(test, inside, rebound):
    loop = f"for x in xs:\n    if {test}:\n        {inside}\n    if {test}:\n        pass\n"
    assert invariant_tests(ast.parse(loop).body[0], rebound=frozenset(rebound)) == []


# a closure rebinds the tested name (`nonlocal`) between its two tests: the replay loss is
# read in an iteration that did not compute it
REBOUND_BY_A_CLOSURE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(8, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
memory = (torch.randn(4, 8), torch.randint(0, 3, (4,)))


def train(batches):
    replay = memory

    def use_replay(on):
        nonlocal replay
        replay = memory if on else None

    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        if replay is not None:
            loss_replay = F.cross_entropy(model(memory[0]), memory[1])
        use_replay(True)
        if replay is not None:
            loss = loss + loss_replay
        loss.backward()
        optimizer.step()
        use_replay(False)


train([(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(3)])
"""


def test_a_name_a_closure_rebinds_is_not_invariant(tmp_path):
    run = run_script(REBOUND_BY_A_CLOSURE, tmp_path)
    assert "backward through the graph a second time" in run.stderr, run.stderr
    assert rules_reported(REBOUND_BY_A_CLOSURE) == ["LF001"]


BINDINGS = {
    "except": "    try:\n        g(x)\n    except ValueError as r:\n        pass\n",
    "match": "    match x:\n        case (_, r):\n            pass\n",
}


@pytest.mark.parametrize("binding", list(BINDINGS))
def test_a_name_bound_by_a_handler_or_a_pattern_is_not_invariant(binding):
    loop = (
        "for x in xs:\n    if r is None:\n        a = f(x)\n"
        + BINDINGS[binding]
        + "    if r is None:\n        g(a)\n"
    )
    assert invariant_tests(ast.parse(loop).body[0]) == []


# The flag is turned off by a method called in the loop: from the second iteration the
# output is read without being computed again.
TOGGLED_BY_A_METHOD = """
import torch
import torch.nn as nn


class Schedule:
    aux = True

    def advance(self):
        self.aux = not self.aux


torch.manual_seed(0)
schedule = Schedule()
net = nn.Linear(3, 3)
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
aux_out = net(torch.randn(1, 3))
for i in range(4):
    if schedule.aux:
        aux_out = net(torch.randn(1, 3))
    loss = aux_out.sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if schedule.aux:
        pass
    schedule.advance()
"""


def test_a_flag_a_called_method_changes_keeps_the_finding(tmp_path):
    run = run_script(TOGGLED_BY_A_METHOD, tmp_path)
    assert "backward through the graph a second time" in run.stderr
    assert "LF001" in rules_reported(TOGGLED_BY_A_METHOD)


# An A3C worker (the corpus case): the hidden state's detach in the loop and the LSTM's step
# in `_rollout` sit under the same setting; the loop also steps an optimizer it holds
# (`self.optimizer.step()` hands over the optimizer, not `self.enable_lstm`). With the LSTM
# on, every rollout starts from a detached state; with it off, the state is never read.
WORKER = (
    Path(__file__).parents[1]
    / "corpus/lf001_ok_a3c_worker_setting_guards_detach_and_lstm/before.py"
).read_text()
STEP = "            loss = self._rollout()\n"
STEPPED = "            self.optimizer.step()\n"
TOGGLE = "            self.{method}()\n"
WORKER_CONTROLS = {  # what else the class does -> whether the flag can change in the loop
    "nothing": ("", "", False),  # the A3C shape: correct
    # a method called on self flips the setting after the detach and back after the step:
    # with it off, the rollout reads the state the previous rollout left, undetached
    "a method flips it": (
        "\n    def _flip(self):\n        self.enable_lstm = not self.enable_lstm\n",
        TOGGLE.format(method="_flip"),
        True,
    ),
    # the same, through a property computed from what a method called on self changes
    "a property of what the loop sets": (
        "\n    @property\n    def enable_lstm(self):\n        return self.phase == 1\n\n"
        "    @enable_lstm.setter\n    def enable_lstm(self, value):\n"
        "        self.phase = 1 if value else 0\n\n"
        "    def _advance(self):\n        self.phase = 1 - self.phase\n",
        TOGGLE.format(method="_advance"),
        True,
    ),
}


@pytest.mark.parametrize("control", list(WORKER_CONTROLS), ids=str)
def test_a_setting_tested_in_the_loop_and_in_a_method_it_calls_on_self(tmp_path, control):
    """The same `self.enable_lstm` test in the loop and in `self._rollout()` is one value
    for the whole loop when nothing the loop runs can change it: no finding, and the script
    runs. A method called on `self` that sets it, or a property computed from what the loop
    sets, can change it: the state is then read undetached, and both the run and the
    finding say so."""
    extra, toggle, fails = WORKER_CONTROLS[control]
    # the control's method after `__init__`, its call after the detach and after the step
    text = WORKER
    if extra:
        text = text.replace(
            "    def _reset_rollout", extra.lstrip("\n") + "\n    def _reset_rollout"
        )
        text = text.replace(STEP, toggle + STEP).replace(STEPPED, STEPPED + toggle)
        assert text.count(toggle) == 2
    run = run_script(text, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is fails, run.stderr
    assert run.returncode != 0 or not fails
    assert ("LF001" in rules_reported(text)) is fails


@pytest.mark.parametrize(
    ("inside", "invariant"),
    [
        ("    out = model(x)\n", True),  # a forward pass does not reconfigure the model
        ("    clip(model.parameters(), 0.5)\n", True),  # reading its parameters neither
        ("    model.train()\n", False),  # a method that may change what the test reads
        ("    model.set_recurrent(False)\n", False),
    ],
    ids=["called", "parameters", "train", "setter"],
)
def test_calling_a_model_or_reading_its_parameters_leaves_its_settings(inside, invariant):
    """torch-ac's PPO: `if self.acmodel.recurrent:` where the batch's memory is bound and again
    where it is read, with `self.acmodel(...)` and `clip_grad_norm_(self.acmodel.parameters())`
    in the loop: the setting keeps one value."""
    loop = (
        "for x in xs:\n    if model.recurrent:\n        m = f(x)\n"
        "    if model.recurrent:\n        g(m)\n" + inside
    )
    assert (keys_of(loop) == [key("model.recurrent")]) is invariant


def runs_of(loop_source: str) -> list[dict[str, bool]]:
    """Each run of the loop's only split, its tests named by their source."""
    loop = ast.parse(textwrap.dedent(loop_source)).body[0]
    names = {
        unnegated(n.test)[0]: ast.unparse(n.test) for n in ast.walk(loop) if isinstance(n, ast.If)
    }
    (dimension,) = invariant_splits(loop)
    return [{names[k]: v for k, v in run.items()} for run in dimension]


def test_a_setting_tested_against_several_values_is_split_once_per_value():
    """`== "wgan_gp"` and `in ("vanilla", "lsgan")` never hold together: one run per value
    the tests name (values that decide every test alike share one), and one for any other."""
    runs = runs_of("""
        for x in loader:
            if opt.gan_type == "wgan_gp":
                a = f(x)
            if opt.gan_type in ("vanilla", "lsgan"):
                a = g(x)
            if opt.gan_type == "wgan_gp":
                h(a)
    """)
    wgan, plain = "opt.gan_type == 'wgan_gp'", "opt.gan_type in ('vanilla', 'lsgan')"
    assert runs == [
        {wgan: True, plain: False},
        {wgan: False, plain: True},
        {wgan: False, plain: False},
    ]


def test_a_setting_an_elif_chain_without_else_lists_takes_only_the_listed_values():
    """`if ... elif ...` with no `else`, each branch computing what a later line uses: the
    code takes the setting to be one of the values listed (no run where none holds)."""
    runs = runs_of("""
        for x in loader:
            if opt.loss == "mse":
                loss = mse(x)
            elif opt.loss == "l1":
                loss = l1(x)
            if opt.loss == "mse":
                log(loss)
    """)
    mse, l1 = "opt.loss == 'mse'", "opt.loss == 'l1'"
    assert runs == [{mse: True, l1: False}, {mse: False, l1: True}]


def test_a_setting_the_loop_assigns_is_not_split():
    loop = ast.parse(
        textwrap.dedent("""
        for x in loader:
            if opt.mode == "a":
                y = f(x)
            opt.mode = "b"
            if opt.mode == "b":
                g(y)
        """)
    ).body[0]
    assert invariant_splits(loop) == []


CHOSEN_ONCE = CORPUS / "lf003_ok_gan_type_chosen_once_across_methods" / "before.py"


@pytest.mark.parametrize("gan_type", ["vanilla", "lsgan", "re_avg_gan"])
def test_a_model_whose_methods_test_one_setting_runs_with_each_value(gan_type, tmp_path):
    """The corpus case that splits a method scope on `self.gan_type`: each value runs, and
    nothing is reported (before the split, LF003 took the discriminator's freed graph of one
    value for the one the relativistic loss reads under another)."""
    source = CHOSEN_ONCE.read_text().replace('default="vanilla"', f'default="{gan_type}"')
    done = run_script(source, tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert rules_reported(source) == []


@pytest.mark.parametrize(
    "inside",
    [
        '    setattr(opt, "mode", "b")\n',
        "    update(opt, x)\n",
        '    vars(opt)["mode"] = "b"\n',
        '    opt.__dict__.update(mode="b")\n',
    ],
    ids=["setattr", "passed", "vars", "dict"],
)
def test_a_setting_whose_object_is_handed_to_code_is_not_split(inside):
    """`self.opt.mode` where the loop hands `self.opt` itself to a call: the callee may
    change the setting between the two tests."""
    loop = ast.parse(
        "for x in loader:\n    if self.opt.mode == 'a':\n        y = f(x)\n"
        + inside.replace("opt", "self.opt")
        + "    if self.opt.mode == 'b':\n        g(y)\n"
    ).body[0]
    assert invariant_splits(loop) == []


def test_a_string_method_of_a_setting_reads_it_without_handing_it_over():
    """`self.opt.gan_type.startswith("wgan")` only reads the setting (a `str` cannot be
    changed): the loop is still split on its values."""
    runs = runs_of("""
        for x in loader:
            if self.opt.gan_type == "hinge":
                prev = f(x)
            elif self.opt.gan_type == "lsgan":
                g(prev)
            if self.opt.gan_type.startswith("wgan"):
                clamp()
    """)
    hinge, lsgan = "self.opt.gan_type == 'hinge'", "self.opt.gan_type == 'lsgan'"
    assert runs == [{hinge: True, lsgan: False}, {hinge: False, lsgan: True}]


# An ACER learner (jingweiz/pytorch-rl): `self.master.enable_lstm` is tested around the
# rollout's detach and around the LSTM's step in `_forward`, which also calls the average
# model the master holds. With the setting on, every rollout starts from a detached state;
# with it off, the state's cell is never changed.
MASTER_HOLDS_AVERAGE = """\
import torch
import torch.nn as nn


class Master:
    def __init__(self):
        self.enable_lstm = True
        self.model = nn.LSTMCell(4, 4)
        self.avg_model = nn.LSTMCell(4, 4)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)


class Learner:
    def __init__(self, master):
        self.master = master
        zeros = torch.zeros(1, 4)
        self.hidden = (zeros, zeros)
        self.avg_hidden = (zeros, zeros)

    def _forward(self, x):
        if self.master.enable_lstm:
            self.hidden = self.master.model(x, self.hidden)
        else:
            self.hidden = (self.master.model(x)[0], self.hidden[1])
        with torch.no_grad():
            self.avg_hidden = self.master.avg_model(x, self.avg_hidden)
        return self.hidden[0]

    def run(self, steps):
        for _ in range(steps):
            if self.master.enable_lstm:  # cut the previous rollout's graph
                self.hidden = (self.hidden[0].detach(), self.hidden[1].detach())
            loss = sum(self._forward(torch.randn(1, 4)).sum() for _ in range(3))
            self.master.optimizer.zero_grad()
            loss.backward()
            self.master.optimizer.step()


Learner(Master()).run(4)
"""
AVERAGE_AS_METHOD = (
    "    def avg_model(self, x, h):\n"
    "        self.enable_lstm = not self.enable_lstm\n"
    "        return self.average(x, h)\n"
)


@pytest.mark.parametrize("setting", [True, False])
@pytest.mark.parametrize("average", ["held module", "method that flips the setting"])
def test_calling_a_module_another_object_holds_leaves_its_settings(tmp_path, average, setting):
    """`self.master.avg_model(x, h)`, where the master's class stores `avg_model` (an LSTM
    cell) and defines no attribute of that name, is a forward pass: it cannot change
    `self.master.enable_lstm`, so the tests split the loop and neither value carries a graph.
    A method of that name may change it (this one flips it on every call): the state is
    then read undetached, and both the run and the finding say so."""
    text = MASTER_HOLDS_AVERAGE.replace("enable_lstm = True", f"enable_lstm = {setting}")
    if average != "held module":
        text = text.replace("self.avg_model = nn.LSTMCell", "self.average = nn.LSTMCell")
        text = text.replace("\n\n\nclass Learner", f"\n\n{AVERAGE_AS_METHOD}\n\nclass Learner")
    fails = average != "held module"
    run = run_script(text, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is fails, run.stderr
    assert ("LF001" in rules_reported(text)) is fails


FIXED_BINDING = (
    "for x in xs:\n{before}    use_aux = {value}\n{after}"
    "    if use_aux:\n        a = f(x)\n    if use_aux:\n        g(a)\n"
)


@pytest.mark.parametrize(
    ("before", "value", "after", "invariant"),
    [
        # Person_reID's `return_feature = opt.arcface or opt.cosface or ...` at the top
        ("", "opt.arcface or opt.cosface", "", True),
        ("", "args.aux_weight > 0", "", True),
        # it reads what the loop changes
        ("", "opt.arcface", "    opt.arcface = x\n", False),
        ("", "x > 0", "", False),
        # a test of the name before the binding reads the previous value
        ("    if use_aux:\n        pass\n", "opt.arcface", "", False),
        # bound again later in the iteration
        ("", "opt.arcface", "    use_aux = not use_aux\n", False),
        # handed to other code, or a call's value
        ("", "opt.arcface", "    h(use_aux)\n", False),
        ("", "ready()", "", False),
    ],
    ids=["settings", "compare", "changed", "target", "tested_first", "rebound", "handed", "call"],
)
def test_a_name_bound_each_iteration_to_the_same_settings_is_invariant(
    before, value, after, invariant
):
    loop = FIXED_BINDING.format(before=before, value=value, after=after)
    assert (keys_of(loop) == [key("use_aux")]) is invariant


AUXILIARY_HEAD_EACH_ITERATION = """\
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--aux_weight", type=float, default=0.3)
args = parser.parse_args([])

torch.manual_seed(0)
body, head, aux_head = nn.Linear(4, 8), nn.Linear(8, 1), nn.Linear(8, 1)
params = [*body.parameters(), *head.parameters(), *aux_head.parameters()]
optimizer = torch.optim.SGD(params, lr=0.1)
for step in range(4):
    features = torch.relu(body(torch.randn(6, 4)))
    use_aux = args.aux_weight > 0
    if use_aux:
        aux = aux_head(features).pow(2).mean()
    loss = head(features).pow(2).mean()
    if use_aux:
        loss = loss + args.aux_weight * aux
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_flag_bound_each_iteration_from_settings_correlates_its_tests(tmp_path):
    """`use_aux = args.aux_weight > 0` at the top of every iteration: the auxiliary loss is
    made and added under the same value, so no iteration reads the previous one's."""
    run = run_script(AUXILIARY_HEAD_EACH_ITERATION, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(AUXILIARY_HEAD_EACH_ITERATION) == []
