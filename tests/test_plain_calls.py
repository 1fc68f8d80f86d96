"""Plain calls (`loopfix.model.plain`): a project function that only moves plain data (a
configuration or bookkeeping helper, loops and all) is run once per calling context and its
run is applied at every later call with that context, in this analysis and in the others of
the run; applying it gives exactly what running the body gives."""

from __future__ import annotations

import weakref
from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.model import plain, summaries
from loopfix.model.loop_model import build_model
from loopfix.parse import parse
from loopfix.project import Project
from loopfix.source import SourceFile

OVERRIDES = """
def overrides(args, names):
    found = {}
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            found[name] = value
    return [f"{k}={v}" for k, v in sorted(found.items())]
"""

TRAINING = """
import argparse
import torch
import torch.nn as nn
{helper}

parser = argparse.ArgumentParser()
args = parser.parse_args()
net = nn.Linear(4, 1)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
{calls}
for step in range(3):
    loss = net(torch.randn(2, 4)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.fixture(autouse=True)
def fresh_runs(monkeypatch):
    """Each test starts with no plain run kept and no function ruled out."""
    monkeypatch.setattr(plain, "RUNS", weakref.WeakKeyDictionary())
    monkeypatch.setattr(plain, "NOT_PLAIN", weakref.WeakSet())


def training(helper: str, calls: list[str]) -> str:
    return TRAINING.format(helper=helper, calls="".join(f"{c}\n" for c in calls))


@pytest.mark.parametrize("sites", [1, 3, 6])
def test_a_helper_with_a_loop_runs_once_per_context_and_serves_every_call(sites):
    """The first call's run leaves entries under the helper's own keys in the scope's
    tables (what its loop walked), which a later call starts from as running would: the
    second call is a context of its own, and every call after it is served."""
    calls = [f"tags{k} = overrides(args, ['lr', 'momentum'])" for k in range(sites)]
    model = build_model(parse(training(OVERRIDES, calls)))
    assert model.plain_counts()["overrides"] == (min(sites, 2), sites)


def test_another_context_gets_a_run_of_its_own():
    """The shape of what is passed is part of the context: a tuple of names after a list of
    them is a run of its own; a call whose context was met before is served."""
    calls = [
        "a = overrides(args, ['lr'])",
        "b = overrides(args, ['lr'])",
        "c = overrides(args, ('lr', 'momentum'))",
        "d = overrides(args, ('momentum', 'lr'))",
        "e = overrides(args, ['momentum'])",
    ]
    model = build_model(parse(training(OVERRIDES, calls)))
    assert model.plain_counts()["overrides"] == (3, 5)


def test_a_helper_that_changes_its_argument_is_not_plain():
    """`args.lr = ...` writes through to the caller's `args`: the body runs at every call."""
    helper = """
def set_defaults(args):
    for name in ["lr", "momentum"]:
        if getattr(args, name, None) is None:
            setattr(args, name, 0.1)
    args.lr = args.lr * 2
"""
    calls = ["set_defaults(args)", "set_defaults(args)"]
    model = build_model(parse(training(helper, calls)))
    assert "set_defaults" not in model.plain_counts()
    # it was run as a plain call once and refused for what it did, not left untried
    assert [f.name for f in plain.NOT_PLAIN] == ["set_defaults"]


def test_an_argument_holding_a_graph_is_not_plain():
    """A tensor built by the network carries its graph: the body must run where it is."""
    helper = """
def total(values):
    out = 0
    for v in values:
        out = out + v
    return out
"""
    calls = [
        "t = total([net(torch.randn(2, 4)).sum()])",
        "u = total([net(torch.ones(2, 4)).sum()])",
    ]
    model = build_model(parse(training(helper, calls)))
    assert "total" not in model.plain_counts()
    # the same helper given numbers is a plain call
    calls = ["t = total([1.0, 2.0])", "u = total([3.0, 4.0])"]
    assert build_model(parse(training(helper, calls))).plain_counts()["total"] == (2, 2)


def test_a_helper_skipped_without_grad_is_not_run_as_a_plain_call():
    """Under `torch.no_grad()` a call of a helper that does nothing a rule asks about is not
    followed at all (`calls.inert`): it is not run as a plain call either."""
    calls = ["with torch.no_grad():", "    a = overrides(args, ['lr'])"]
    model = build_model(parse(training(OVERRIDES, calls)))
    assert "overrides" not in model.plain_counts()
    calls = ["a = overrides(args, ['lr'])"]
    assert build_model(parse(training(OVERRIDES, calls))).plain_counts()["overrides"] == (1, 1)


def test_a_method_is_not_plain():
    """A method reads its object's state, which its arguments do not show."""
    helper = """
class Config:
    def __init__(self):
        self.names = ["lr"]

    def overrides(self, args):
        return [n for n in self.names if getattr(args, n, None) is not None]


config = Config()
"""
    calls = ["a = config.overrides(args)", "b = config.overrides(args)"]
    model = build_model(parse(training(helper, calls)))
    assert "overrides" not in model.plain_counts()


def write_project(root: Path) -> list[Path]:
    (root / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (root / "options.py").write_text(OVERRIDES)
    scripts = []
    for name in ("train_a.py", "train_b.py"):
        script = root / name
        text = training("from options import overrides", ["t = overrides(args, ['lr'])"])
        script.write_text(text)
        scripts.append(script)
    return scripts


def findings(path: Path, project) -> list:
    result = analyse_source(SourceFile.read(path), plan_fixes=False, project=project)
    return [(f.rule, f.start, f.end, f.message) for f in result.findings]


def test_a_run_is_shared_by_the_files_that_import_the_helper(tmp_path, monkeypatch):
    """`options.overrides` is run by the analysis of the first script and applied, not run,
    in the second's; each application is checked against running the body (`CHECK`)."""
    scripts = write_project(tmp_path)
    computed = []
    compute = plain._computed

    def counting(interpreter, call, env, closure):
        computed.append(call.function.name)
        return compute(interpreter, call, env, closure)

    monkeypatch.setattr(plain, "_computed", counting)
    monkeypatch.setattr(summaries, "CHECK", True)
    project = Project.for_file(scripts[0])
    checked = [findings(script, project) for script in scripts]
    assert computed == ["overrides"]
    monkeypatch.setattr(summaries, "CHECK", False)
    monkeypatch.setattr(summaries, "ENABLED", False)
    assert checked == [findings(script, Project.for_file(script)) for script in scripts]


NESTED = """
def shown(value):
    return str(value)


def overrides(args, names):
    found = {}
    for name in names:
        value = getattr(args, name, None)
        if value is not None:
            found[name] = shown(value)
    return found
"""


def test_an_applied_run_records_the_calls_it_makes_with_their_grad_mode(tmp_path, monkeypatch):
    """The calls a plain run made (`shown(value)`) are recorded again where it is applied, in
    another file's analysis, each as running with grad enabled or not
    (`CallSites.called_with_grad`, which decides whether an evaluation helper runs as its own
    scope): checked against running the body."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "options.py").write_text(NESTED)
    text = training("from options import overrides", ["t = overrides(args, ['lr'])"])
    scripts = [tmp_path / "train_a.py", tmp_path / "train_b.py"]
    for script in scripts:
        script.write_text(text)
    monkeypatch.setattr(summaries, "CHECK", True)
    project = Project.for_file(scripts[0])
    for script in scripts:
        result = analyse_source(SourceFile.read(script), plan_fixes=False, project=project)
        assert result.errors == []
