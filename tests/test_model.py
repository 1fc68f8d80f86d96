"""The loop model's answers on small snippets: what rules build on."""

from __future__ import annotations

import ast
import textwrap

import pytest

from loopfix.model.loop_model import build_model

PRELUDE = """\
import itertools
import torch
import torch.nn as nn
a = nn.Linear(2, 2)
b = nn.Linear(2, 2)
"""


def model_of(code: str):
    return build_model(ast.parse(PRELUDE + textwrap.dedent(code)), every_scope=True)


@pytest.mark.parametrize(
    "construction",
    [
        "torch.optim.Adam([*a.parameters(), *b.parameters()])",
        "torch.optim.Adam(list(a.parameters()) + list(b.parameters()))",
        "torch.optim.Adam(itertools.chain(a.parameters(), b.parameters()))",
        "torch.optim.SGD([{'params': a.parameters()}, {'params': b.parameters(), 'lr': 1}])",
    ],
)
def test_optimizer_owns_the_modules_it_was_built_from(construction):
    model = model_of(f"opt = {construction}\nopt.step()\n")
    (step,) = model.updates()
    assert step.kind == "step" and step.modules == frozenset({"a", "b"})


def test_optimizer_on_self_is_resolved_inside_methods():
    model = model_of(
        """
        class Trainer:
            def __init__(self):
                self.net_d = nn.Linear(2, 1)
                self.opt_d = torch.optim.Adam(self.net_d.parameters())

            def step(self):
                self.opt_d.step()
        """
    )
    steps = [u for u in model.updates() if u.statement is not None]
    assert [s.modules for s in steps] == [frozenset({"self.net_d"})]


@pytest.mark.parametrize(
    "container, step",
    [
        ("opts = {'a': torch.optim.SGD(a.parameters()), 'b': torch.optim.SGD(b.parameters())}",
         "opts['b'].step()"),
        ("opts = [torch.optim.SGD(a.parameters()), torch.optim.SGD(b.parameters())]",
         "opts[1].step()"),
    ],
)  # fmt: skip
def test_optimizers_held_in_dicts_and_lists(container, step):
    model = model_of(f"{container}\n{step}\n")
    assert model.updates()[0].modules == frozenset({"b"})


def test_unresolvable_parameters_leave_the_optimizer_unknown():
    model = model_of("opt = torch.optim.Adam(get_params())\nopt.step()\n")
    assert model.updates()[0].modules is None


def test_an_optimizer_over_named_tensors_steps_those_tensors_and_no_module():
    """SAC's temperature: `Adam([self.log_alpha])` (alone or with a module's parameters)."""
    from loopfix.rules.update_order import inputs_expression

    model = model_of(
        """
        log_alpha = torch.zeros(1, requires_grad=True)
        opt_alpha = torch.optim.Adam([log_alpha])
        opt_both = torch.optim.Adam([*a.parameters(), log_alpha])
        opt_alpha.step()
        opt_both.step()
        """
    )
    alone, both = (u.modules for u in model.updates())
    assert alone == frozenset({"=log_alpha"}) and both == frozenset({"a", "=log_alpha"})
    assert inputs_expression(sorted(alone)) == "[log_alpha]"
    assert inputs_expression(sorted(both)) == "[log_alpha, *a.parameters()]"
    unknown = model_of("opt = torch.optim.Adam([make_tensor()])\nopt.step()\n")
    assert unknown.updates()[0].modules is None


def test_stale_graph_after_step_and_fresh_graph_after_recompute():
    model = model_of(
        """
        opt_a = torch.optim.SGD(a.parameters(), lr=0.1)
        out = b(a(torch.randn(3, 2)))
        out.sum().backward(retain_graph=True)
        opt_a.step()
        out.mean().backward()
        fresh = b(a(torch.randn(3, 2)))
        fresh.mean().backward()
        """
    )
    first, stale, fresh = model.backwards()
    assert model.stale_steps_before(stale.id) and not model.stale_steps_before(fresh.id)
    assert not model.freed_graph_reused_by(stale.id)


def test_detach_cuts_the_shared_graph():
    model = model_of(
        """
        h = a(torch.randn(3, 2))
        h.sum().backward()
        b(h.detach()).sum().backward()
        """
    )
    assert not any(model.freed_graph_reused_by(s.id) for s in model.backwards())


def test_the_detection_path_never_imports_torch():
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from loopfix.analysis import analyse_source\n"
        "from loopfix.source import SourceFile\n"
        "from pathlib import Path\n"
        "import loopfix.cli\n"
        "path = Path('corpus/lf002_gan_generator_reuses_d_output/before.py')\n"
        "result = analyse_source(SourceFile.read(path))\n"
        "assert result.findings and result.changed\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    root = __import__("pathlib").Path(__file__).resolve().parent.parent
    completed = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True)
    assert completed.returncode == 0, completed.stderr.decode()[-2000:]


def _findings(text: str, every_scope: bool) -> list[tuple]:
    from loopfix.rules import ALL_RULES, FileContext
    from loopfix.rules.base import Layout

    tree = ast.parse(text)
    context = FileContext(text, tree, build_model(tree, every_scope), Layout(text))
    return [(f.rule, f.start, f.end) for rule in ALL_RULES for f in rule.detect(context)]


HELPER_STEPS = """\
import torch
import torch.nn as nn

rnn, head = nn.GRU(3, 5), nn.Linear(5, 1)
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)


def update(loss):
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()


def run(batches):
    hidden = torch.zeros(1, 2, 5)
    for x in batches:
        out, hidden = rnn(x, hidden)
        update(head(out).pow(2).mean())
"""


def test_skipping_scopes_without_a_backward_never_changes_findings():
    """Only scopes that mention a backward pass, or call (by name, transitively) a function of
    the file that does, are interpreted: the loop in `run` never says `backward` itself."""
    from corpus_cases import load_cases

    texts = [case.before.read_text() for case in load_cases()] + [HELPER_STEPS]
    for text in texts:
        assert _findings(text, every_scope=False) == _findings(text, every_scope=True)
    assert [rule for rule, *_ in _findings(HELPER_STEPS, every_scope=False)] == ["LF001"]


def test_a_project_subclass_of_a_torch_optimizer_is_an_optimizer_over_its_first_argument():
    code = """
    class SharedAdam(torch.optim.Adam):
        def __init__(self, params, lr=1e-3):
            super().__init__(params, lr=lr)

    class Slower(SharedAdam):
        pass

    opt = Slower(a.parameters())
    opt.step()
    """
    (step,) = model_of(code).updates()
    assert step.kind == "step" and step.modules == frozenset({"a"})


@pytest.mark.parametrize(
    ("start", "followed"),
    [
        ("torch.multiprocessing.Process(target=train, args=(a, 1))", True),
        ("threading.Thread(target=train, args=[a, 1])", True),
        ("torch.multiprocessing.Process(target=train, args=workers_args)", False),
    ],
)
def test_a_worker_started_with_a_target_calls_it_with_its_arguments(start, followed):
    """What the worker process runs binds the function's parameters: `model` is a module."""
    code = f"""
    import threading
    import torch.multiprocessing

    def train(model, rank):
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.randn(2, 2)).sum().backward()
        opt.step()

    workers_args = (a, 1)
    worker = {start}
    """
    model = build_model(ast.parse(PRELUDE + textwrap.dedent(code)))
    modules = [u.modules for u in model.updates() if u.kind == "step"]
    assert (frozenset({"model"}) in modules) is followed  # else of unknown modules


def test_an_argument_that_may_be_none_is_an_optimizer_once_the_none_branch_builds_one():
    """`def train(shared, optimizer=None): if optimizer is None: optimizer = Adam(...)`,
    given None or a shared optimizer (ikostrikov's A3C): after the test it is an optimizer
    over `shared` either way, so its steps are known."""
    model = model_of(
        """
        def train(shared, optimizer=None):
            if optimizer is None:
                optimizer = torch.optim.Adam(shared.parameters())
            for x in batches:
                optimizer.zero_grad()
                shared(x).sum().backward()
                optimizer.step()

        shared = nn.Linear(3, 1)
        optimizer = None if flag else torch.optim.SGD(shared.parameters(), lr=0.1)
        train(shared, optimizer)
        """
    )
    steps = [u for u in model.updates() if u.kind == "step"]
    assert steps and all(u.modules == {"shared"} for u in steps)
