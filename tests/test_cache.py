"""The cache's manifest: a warm scan answers unchanged files from their stamps, and any edit,
even one that keeps the size and puts the modification time back, is seen."""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import pytest

from loopfix import cache as cache_module
from loopfix import project as project_module
from loopfix import scan as scan_module
from loopfix.config import Config
from loopfix.scan import ScanSettings

from corpus_cases import CORPUS

BUGGY = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
# the same size: the state is no longer carried from one chunk to the next
CORRECT = BUGGY.replace("out, h = gru(chunk, h)", "out, _ = gru(chunk, h)")
MODELS = "import torch.nn as nn\n\n\nclass Net(nn.Linear):\n    pass\n"
TICK = 0.05  # s: longer than a file system's timestamp step on Linux (one jiffy)


@pytest.fixture
def old_enough(monkeypatch):
    """The manifest's clock, RACY_NS and a second ahead: the files a test has just written
    count as changed long before the scan (as in a real repository), so their stamps are
    trusted."""

    class Later:
        @staticmethod
        def time_ns() -> int:
            return time.time_ns() + cache_module.RACY_NS + 1_000_000_000

    monkeypatch.setattr(cache_module, "time", Later)


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "train.py").write_text("from models import Net\n\n" + BUGGY)
    return tmp_path


def scan(folder: Path, config: Config | None = None, jobs: int = 1) -> dict:
    """path name -> report of a scan of every .py file in `folder`, with its cache there."""
    files = sorted(folder.glob("*.py"))
    settings = ScanSettings(config or Config(), str(folder / ".loopfix_cache"))
    return {Path(r.path).name: r for r in scan_module.scan(files, settings, jobs)}


def facts(reports: dict) -> dict:
    """The reports without whether they came from the cache."""
    return {name: dataclasses.replace(report, cached=False) for name, report in reports.items()}


def rules_found(report) -> list[str]:
    return [finding["rule"] for finding in report.findings]


@pytest.fixture
def reads(monkeypatch) -> list[Path]:
    """Every file a scan reads: the files it analyses or digests, and the modules it digests."""
    read: list[Path] = []
    read_bytes, read_disk = Path.read_bytes, project_module.read_disk
    monkeypatch.setattr(Path, "read_bytes", lambda path: read.append(path) or read_bytes(path))
    monkeypatch.setattr(
        project_module, "read_disk", lambda path: read.append(path) or read_disk(path)
    )
    return read


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_warm_scan_reads_no_file_whose_stamp_is_unchanged(project, old_enough, reads, jobs):
    cold = scan(project, jobs=jobs)
    assert not cold["train.py"].cached and rules_found(cold["train.py"]) == ["LF001"]
    reads.clear()
    warm = scan(project, jobs=jobs)
    assert all(report.cached for report in warm.values()) and reads == []
    assert facts(warm) == facts(cold)  # the same reports, found again without reading a file


def test_an_edit_that_keeps_the_size_and_the_modification_time_is_seen(project, old_enough):
    train = project / "train.py"
    assert rules_found(scan(project)["train.py"]) == ["LF001"]
    before = train.stat()
    time.sleep(TICK)
    train.write_text("from models import Net\n\n" + CORRECT)
    os.utime(train, ns=(before.st_atime_ns, before.st_mtime_ns))  # as `touch -d` or `tar`
    assert train.stat().st_size == before.st_size
    assert train.stat().st_mtime_ns == before.st_mtime_ns
    again = scan(project)["train.py"]
    assert not again.cached and rules_found(again) == []


def test_editing_a_dependency_re_checks_the_file_that_imports_it(project, old_enough, reads):
    scan(project)
    time.sleep(TICK)
    (project / "models.py").write_text("import torch.nn as nn\n\nNet = nn.Linear\n")
    reads.clear()
    again = scan(project)
    assert not again["train.py"].cached
    assert project / "models.py" in reads


def test_a_file_changed_just_before_the_scan_is_read_again_by_the_next(project, reads):
    """Without `old_enough`, the files were written less than RACY_NS before the scan: a file
    system with coarse timestamps could give an edit right after the scan the same stamp."""
    first = scan(project)
    reads.clear()
    second = scan(project)
    assert facts(second) == facts(first) and all(report.cached for report in second.values())
    assert project / "train.py" in reads  # by its content, not its stamp


def test_a_damaged_manifest_is_ignored(project, old_enough):
    cold = scan(project)
    (manifest,) = (project / ".loopfix_cache" / "manifests").glob("*.json")
    for damage in ("{", '{"files": {"x": 1}, "pairs": [], "modules": {}}', "[]"):
        manifest.write_text(damage)
        assert facts(scan(project)) == facts(cold)
    stored = json.loads(manifest.read_text())  # rewritten whole by the scan that read "[]"
    train = stored["files"][str(project / "train.py")]
    train[3] = [10**6]  # a dependency that is not in the table
    manifest.write_text(json.dumps(stored))
    assert facts(scan(project)) == facts(cold)


def test_each_file_keeps_the_rules_it_was_checked_with(project, old_enough):
    """Two configurations with the same settings but another root select other rules for
    one file: a per-file ignore matches only inside its configuration's folder."""
    ignores = (("train.py", ("LF001",)),)
    inside = Config(per_file_ignores=ignores, root=project)
    outside = Config(per_file_ignores=ignores, root=project / "elsewhere")
    assert inside.key() == outside.key()
    assert rules_found(scan(project, inside)["train.py"]) == []
    assert rules_found(scan(project, outside)["train.py"]) == ["LF001"]
    assert rules_found(scan(project, inside)["train.py"]) == []


def test_the_manifest_forgets_deleted_files(project, old_enough):
    (project / "other.py").write_text(BUGGY)
    scan(project)
    manifest = next((project / ".loopfix_cache" / "manifests").glob("*.json"))
    assert str(project / "other.py") in json.loads(manifest.read_text())["files"]
    (project / "other.py").unlink()
    time.sleep(TICK)
    (project / "train.py").write_text(BUGGY)  # a fresh report: the manifest is written again
    scan(project)
    kept = json.loads(manifest.read_text())["files"]
    assert sorted(Path(path).name for path in kept) == ["models.py", "train.py"]


RECURRENT = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(4, 8, batch_first=True)

    def forward(self, x, h):
        out, h = self.rnn(x, h)
        return out.sum(), h{detach}
"""
TRAIN = """\
import torch
from models import Net

net = Net()
opt = torch.optim.SGD(net.parameters(), lr=0.1)
h = None
for step in range(3):
    loss, h = net(torch.randn(2, 5, 4), h)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def check(folder: Path, *paths: str, cache: bool = True) -> list[str]:
    """`path:rule` of each finding in `paths` (relative to `folder`), with the cache there
    (or none)."""
    settings = ScanSettings(Config(), str(folder / ".loopfix_cache") if cache else None)
    files = [folder / path for path in paths]
    return sorted(
        f"{Path(r.path).relative_to(folder)}:{f['rule']}"
        for r in scan_module.scan(files, settings, 1)
        for f in r.findings
    )


def test_two_copies_of_a_file_importing_different_modules_are_two_reports(tmp_path, old_enough):
    """`a/train.py` and `b/train.py` are the same bytes, and each imports its own folder's
    `models.py`: only `b`'s keeps the state's graph."""
    (tmp_path / ".git").mkdir()
    for folder, detach in (("a", ".detach()"), ("b", "")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "models.py").write_text(RECURRENT.format(detach=detach))
        (tmp_path / folder / "train.py").write_text(TRAIN)
    assert check(tmp_path, "a/train.py") == []
    assert check(tmp_path, "a/train.py", "b/train.py") == ["b/train.py:LF001"]


def test_a_module_written_where_an_import_looks_first_re_checks_the_importer(tmp_path, old_enough):
    """`sub/train.py` imported the root's `models.py`; `python sub/train.py` imports a
    `sub/models.py` once there is one."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "models.py").write_text(RECURRENT.format(detach=".detach()"))
    (tmp_path / "sub" / "train.py").write_text(TRAIN)
    assert check(tmp_path, "sub/train.py") == []
    (tmp_path / "sub" / "models.py").write_text(RECURRENT.format(detach=""))
    assert check(tmp_path, "sub/train.py") == ["sub/train.py:LF001"]


def test_a_project_root_written_below_the_old_one_re_checks_the_file(tmp_path, old_enough):
    """A `pyproject.toml` written in `sub/` makes it the project: the root's `models.py` is
    no longer what `sub/train.py` imports (the state is then not known to be detached)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "models.py").write_text(RECURRENT.format(detach=".detach()"))
    (tmp_path / "sub" / "train.py").write_text(TRAIN)
    before = check(tmp_path, "sub/train.py")
    (tmp_path / "sub" / "pyproject.toml").write_text("[project]\nname = 'sub'\n")
    after = check(tmp_path, "sub/train.py")
    assert before == [] and after == check(tmp_path, "sub/train.py", cache=False)
    assert after == ["sub/train.py:LF001"]


@pytest.mark.parametrize(
    "damage",
    [
        {"findings": 3},
        {"findings": [{"line": "a"}]},
        {"errors": 5},
        {"dependencies": ["x"]},
        {"suppressed": "many"},
    ],
)
def test_a_damaged_cache_entry_is_a_miss(project, damage):
    cold = scan(project)
    for entry in (project / ".loopfix_cache").glob("*/*.json"):
        entry.write_text(json.dumps({**json.loads(entry.read_text()), **damage}))
    for manifest in (project / ".loopfix_cache" / "manifests").glob("*.json"):
        manifest.unlink()
    assert facts(scan(project)) == facts(cold)


def test_a_damaged_module_entry_in_the_manifest_is_a_miss(project, old_enough):
    cold = scan(project)
    (manifest,) = (project / ".loopfix_cache" / "manifests").glob("*.json")
    stored = json.loads(manifest.read_text())
    stored["modules"] = {path: 7 for path in stored["modules"]}
    manifest.write_text(json.dumps(stored))
    assert facts(scan(project)) == facts(cold)
