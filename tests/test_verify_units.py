"""Function and method units, run through a user's loopfix_fixtures.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import SCRIPT, collect_runs, unit_of, verify_file

SETTINGS = RunSettings(device="cpu", iterations=3, timeout=120)

LIBRARY = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(3, 5)
        self.head = nn.Linear(5, 1)

    def forward(self, x, h):
        out, h = self.gru(x, h)
        return self.head(out), h


def train(model, batches, lr=0.1):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    hidden = torch.zeros(1, 2, 5)
    for x, y in batches:
        prediction, hidden = model(x, hidden)
        loss = (prediction - y).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


class Trainer:
    def __init__(self, model):
        self.model = model

    def fit(self, batches):
        train(self.model, batches)
"""

FIXTURES = """\
import torch


def batches():
    return [(torch.randn(4, 2, 3), torch.randn(4, 2, 1)) for _ in range(4)]


def fixture_train(module):
    return (module.Net(), batches()), {"lr": 0.05}
"""


def analyse(path: Path):
    return analyse_source(SourceFile.read(path))


@pytest.fixture
def library(tmp_path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "pkg").mkdir()
    path = tmp_path / "pkg" / "library.py"
    path.write_text(LIBRARY)
    return path


def test_a_function_with_a_fixture_verifies_live(library):
    (library.parent.parent / "loopfix_fixtures.py").write_text(FIXTURES)
    result = analyse(library)
    (finding,) = result.findings
    assert unit_of(result, finding) == "train"
    (verdict,) = verify_file(result, SETTINGS)
    assert (verdict.verdict, verdict.level) == ("equivalent", "live"), verdict
    runs = collect_runs(result, SETTINGS)["train"]
    assert "Trying to backward through the graph a second time" in runs.original.error


def test_without_a_fixture_a_library_function_is_unverified(library):
    result = analyse(library)
    assert unit_of(result, result.findings[0]) == SCRIPT
    (verdict,) = verify_file(result, SETTINGS)
    assert (
        verdict.verdict.startswith("unverified: nothing runs it") and verdict.level == "unverified"
    )


def test_fixtures_are_not_looked_for_above_the_project_root(library, tmp_path):
    (tmp_path.parent / "loopfix_fixtures.py").write_text(FIXTURES)  # outside the project
    try:
        result = analyse(library)
        assert unit_of(result, result.findings[0]) == SCRIPT
    finally:
        (tmp_path.parent / "loopfix_fixtures.py").unlink()


METHOD_LIBRARY = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.lstm = nn.LSTM(3, 4)
        self.optimizer = torch.optim.Adam(self.lstm.parameters(), lr=1e-3)

    def fit(self, batches):
        state = None
        for x in batches:
            out, state = self.lstm(x, state)
            loss = out.pow(2).mean()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
"""

METHOD_FIXTURES = """\
import torch


def fixture_Trainer_fit(module):
    return module.Trainer(), ([torch.randn(5, 2, 3) for _ in range(4)],), {}
"""


def test_a_method_with_a_fixture_verifies_live(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "loopfix_fixtures.py").write_text(METHOD_FIXTURES)
    path = tmp_path / "trainer.py"
    path.write_text(METHOD_LIBRARY)
    result = analyse(path)
    assert unit_of(result, result.findings[0]) == "Trainer.fit"
    (verdict,) = verify_file(result, SETTINGS)
    assert (verdict.verdict, verdict.level) == ("equivalent", "live"), verdict
