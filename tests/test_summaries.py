"""Function summaries (`loopfix.model.summaries`): a pure data-flow function is summarised
once per calling context and the summary is applied at every call site with that context;
applying it gives exactly what running the body gives."""

from __future__ import annotations

import weakref
from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.model import plain, summaries
from loopfix.model.loop_model import build_model
from loopfix.parse import parse
from loopfix.source import SourceFile

from corpus_cases import CASES

HELPER_CALLED_FROM = """
import torch
import torch.nn as nn


def features(net, x):
    hidden = torch.relu(net(x))
    return hidden.mean(dim=1)


def train(net, opt, x):
{calls}
    loss = sum(parts).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def source_with_calls(sites: int) -> str:
    calls = "    parts = []\n" + "".join(
        f"    parts.append(features(net, x * {k}))\n" for k in range(sites)
    )
    return HELPER_CALLED_FROM.format(calls=calls)


@pytest.mark.parametrize("sites", [1, 3, 7])
def test_a_helper_called_from_n_sites_is_summarised_once_and_applied_n_times(sites):
    model = build_model(parse(source_with_calls(sites)))
    assert model.summary_counts()["features"] == (1, sites)


def test_a_module_forward_is_summarised_per_context_not_per_call():
    source = """
import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(4, 4)

    def forward(self, x):
        return self.l1(x).tanh()


block = Block()
a = block(torch.randn(2, 4))
b = block(torch.randn(3, 4))
c = block(torch.randn(5, 4))
(a + b + c).sum().backward()
"""
    model = build_model(parse(source))
    assert model.summary_counts()["forward"] == (1, 3)


def test_a_body_with_effects_is_not_summarised():
    source = """
def update(opt, loss):
    opt.zero_grad()
    loss.backward()
    opt.step()


update(opt_a, loss_a)
update(opt_b, loss_b)
"""
    assert "update" not in build_model(parse(source)).summary_counts()


def test_a_body_calling_a_looping_helper_by_name_is_not_tried(monkeypatch):
    """`load(path)` calls `parse(rows)`, whose loop makes any body that runs it
    unsummarisable: `load` is not tried as a summary (a try would run both bodies once more
    only to fail), nor is `parse`; `scale`, which calls only a pure helper, still is."""
    source = """
import torch


def parse(rows):
    out = []
    for row in rows:
        out.append(row)
    return out


def load(path):
    return parse(open(path))


def double(x):
    return x * 2


def scale(x):
    return double(x) + 1


def train(net, opt, x, path):
    data = load(path)
    more = load(path + "1")
    loss = net(scale(x)).sum() + net(scale(2 * x)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    from loopfix.model.calls import CallsMixin

    monkeypatch.setattr(summaries, "UNSUMMARISABLE", weakref.WeakSet())
    tried = []
    run_body = CallsMixin._run_body

    def counting(self, call, env, placeholders=None):
        if placeholders is not None:  # run on placeholders: a summary being computed
            tried.append(call.function.name)
        return run_body(self, call, env, placeholders)

    monkeypatch.setattr(CallsMixin, "_run_body", counting)
    counts = build_model(parse(source)).summary_counts()
    assert counts["scale"][1] == 2  # applied at both calls
    assert "load" not in counts and "parse" not in counts
    assert "load" not in tried and "scale" in tried


def test_a_context_refused_before_its_body_runs_leaves_the_others_summarisable(monkeypatch):
    """`scaled` reads the global `w`: while `w` holds a graph, that context has no summary
    (found without running the body); the call where `w` holds none is summarised, since
    refusing one context this way costs nothing that would make trying others wasteful."""
    source = """
import torch
import torch.nn as nn


def scaled(x):
    return x * w


net = nn.Linear(4, 4)
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    w = net(torch.randn(2, 4))
    first = scaled(net(torch.randn(2, 4)))
    w = torch.ones(1)
    second = scaled(torch.randn(2, 4).sum(dim=1))
    loss = first.sum() + second.sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""
    monkeypatch.setattr(summaries, "UNSUMMARISABLE", weakref.WeakSet())
    assert "scaled" in build_model(parse(source)).summary_counts()


def findings(path: Path) -> list:
    result = analyse_source(SourceFile.read(path), plan_fixes=False, project=None)
    return [(f.rule, f.start, f.end, f.message) for f in result.findings]


def test_summaries_give_what_running_the_bodies_gives_on_the_corpus(monkeypatch):
    """Every application is checked against running the body (`CHECK`: a difference
    raises), and the findings equal those of an analysis that runs every body."""
    cases = [case.before for case in CASES]
    # functions found unsummarisable by earlier tests (kept for the run) are tried again here,
    # and plain calls are run again (`plain.RUNS`), each application checked
    monkeypatch.setattr(summaries, "UNSUMMARISABLE", weakref.WeakSet())
    monkeypatch.setattr(plain, "RUNS", weakref.WeakKeyDictionary())
    monkeypatch.setattr(plain, "NOT_PLAIN", weakref.WeakSet())
    monkeypatch.setattr(summaries, "CHECK", True)
    checked = {path: findings(path) for path in cases}
    monkeypatch.setattr(summaries, "CHECK", False)
    monkeypatch.setattr(summaries, "ENABLED", False)
    assert checked == {path: findings(path) for path in cases}


HELPERS = """\
import torch


def features(net, x):
    hidden = torch.relu(net(x))
    return hidden.mean(dim=1)
"""

TRAINING = """\
import torch
import torch.nn as nn

from helpers import features


def train_{k}(net, opt, x):
    loss = features(net, x).sum() + features(net, 2 * x).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def test_a_project_function_that_cannot_be_summarised_is_tried_once_per_run(tmp_path, monkeypatch):
    """Once a project helper's body could not be summarised, the analyses of the other
    files importing it run its body without trying again (each try runs the body once more)."""
    from loopfix.project import Project

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "helpers.py").write_text(HELPERS)
    tried = []

    def refused(interpreter, call, env, roots):
        tried.append(call.function.name)
        return None

    monkeypatch.setattr(summaries, "_compute", refused)
    project = Project(tmp_path)
    for k in range(3):
        script = tmp_path / f"train_{k}.py"
        script.write_text(TRAINING.format(k=k))
        build_model(parse(script.read_text()), resolver=project.resolver_for(script))
    assert tried == ["features"]


LOGGER = """\
class Logger:
    def __init__(self, name=None):
        self.name = name

    def save_config(self, config):
        config_json = dict(config)
        if self.name is not None:
            config_json["name"] = self.name
        for key in config_json:
            print(key)


class EpochLogger(Logger):
    def store(self, **kwargs):
        pass
"""

ALGORITHM = """\
import torch
from pkg.logx import EpochLogger


def algo(steps=3):
    logger = EpochLogger()
    logger.save_config(locals())
    net = torch.nn.Linear(2, 1)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    total = 0
    for _ in range(steps):
        opt.zero_grad()
        loss = net(torch.randn(4, 2)).pow(2).mean()
        loss.backward()
        opt.step()
        total += loss
        logger.store(loss=loss.item())
    print(total)
"""


def test_an_inherited_method_that_cannot_be_summarised_runs_in_every_module(tmp_path):
    """A base class's method (here with a loop) called from the scopes of two modules, each
    running it among its own names: once found unsummarisable it is run in both (a
    summary's table entry for the failed context is not applied elsewhere)."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "logx.py").write_text(LOGGER)
    (tmp_path / "pkg" / "algo.py").write_text(ALGORITHM)
    main = ALGORITHM.replace("import torch\n", "import sys\nimport torch\n")
    main = main.replace(
        "from pkg.logx import EpochLogger\n",
        "from pkg.logx import EpochLogger\nfrom pkg.algo import algo as other_algo\n",
    )
    main += "\n\nif __name__ == '__main__':\n    other_algo() if sys.argv[1:] else algo()\n"
    (tmp_path / "main.py").write_text(main)
    result = analyse_source(SourceFile.read(tmp_path / "main.py"))
    assert result.errors == []
    assert [f.rule for f in result.findings] == ["LF006"]
