"""Repository-scale runs: discovery, settings, suppressions, cache, parallel jobs, output
formats, interactive review and pre-commit."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from loopfix import cache as cache_module
from loopfix import project as project_module
from loopfix import scan as scan_module
from loopfix.cli import _progress, app
from loopfix.config import Config, parse_config
from loopfix.report import OutputFormat
from loopfix.scan import FileReport, ScanSettings, analyse_path

from corpus_cases import CORPUS, load_cases

runner = CliRunner()
BUGGY = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
FIXED = (CORPUS / "lf001_gru_state_init_once" / "after.py").read_text()
GAN = (CORPUS / "lf002_gan_generator_reuses_d_output" / "before.py").read_text()
ROOT = Path(__file__).resolve().parent.parent


def invoke(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".git").mkdir()
    (tmp_path / "train.py").write_text(BUGGY)
    return tmp_path


def reported_files(result) -> set[str]:
    return {line.split(":", 1)[0] for line in result.stdout.splitlines() if ":" in line}


# -- discovery ------------------------------------------------------------------------------


def test_gitignore_files_are_honoured_from_the_repository_root_down(repo):
    (repo / ".gitignore").write_text("generated/\n*_old.py\n!keep_old.py\n/top_only.py\n")
    for name in ["generated/g.py", "a/b_old.py", "a/keep_old.py", "top_only.py", "a/top_only.py"]:
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(BUGGY)
    (repo / "a" / ".gitignore").write_text("local.py\n")
    (repo / "a" / "local.py").write_text(BUGGY)
    result = invoke("check", ".")
    assert reported_files(result) == {"train.py", "a/keep_old.py", "a/top_only.py"}
    # walking a subfolder still honours the root's .gitignore
    assert reported_files(invoke("check", "a")) == {"a/keep_old.py", "a/top_only.py"}


def test_exclude_patterns_from_the_command_line_and_the_config(repo):
    (repo / "legacy").mkdir()
    (repo / "legacy" / "old.py").write_text(BUGGY)
    (repo / "exp_1.py").write_text(BUGGY)
    assert reported_files(invoke("check", ".")) == {"train.py", "legacy/old.py", "exp_1.py"}
    assert reported_files(invoke("check", ".", "--exclude", "legacy/")) == {"train.py", "exp_1.py"}
    (repo / "pyproject.toml").write_text('[tool.loopfix]\nexclude = ["exp_*.py"]\n')
    result = invoke("check", ".", "--exclude", "legacy/")
    assert reported_files(result) == {"train.py"}
    # explicitly named files honour exclude too (pre-commit passes file names)
    assert invoke("check", "exp_1.py").exit_code == 0


# -- configuration and suppressions -------------------------------------------------------


def test_tool_loopfix_selects_rules_per_file_and_flags_override_it(repo):
    (repo / "gan.py").write_text(GAN)
    (repo / "experiments").mkdir()
    (repo / "experiments" / "gan.py").write_text(GAN)
    (repo / "pyproject.toml").write_text(
        '[tool.loopfix]\nignore = ["LF001"]\nper-file-ignores = { "experiments/*" = ["LF002"] }\n'
    )
    result = invoke("check", ".", "--format", "json")
    rules = {(row["path"], row["rule"]) for row in json.loads(result.stdout)}
    assert rules == {("gan.py", "LF002")}
    result = invoke("check", ".", "--format", "json", "--ignore", "LF002")
    assert {row["rule"] for row in json.loads(result.stdout)} == {"LF001"}


@pytest.mark.parametrize(
    "table, complaint",
    [
        ("selct = []", "selct: unknown key"),
        ('select = ["LF999"]', "unknown rule code 'LF999'"),
        ('iterations = "3"', "iterations: must be a positive"),
        ('device = "tpu"', "device: must be one of"),
        ('script-args = "--data tiny"', "script-args: must be a list of strings"),
    ],
)
def test_a_bad_setting_is_a_one_line_error(repo, table, complaint):
    (repo / "pyproject.toml").write_text(f"[tool.loopfix]\n{table}\n")
    result = invoke("check", ".")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert "pyproject.toml" in line and complaint in line


def test_a_script_command_line_with_a_quote_left_open_is_a_one_line_error(repo):
    result = invoke("verify", ".", "--script-args", "--data 'tiny")
    assert result.exit_code == 2
    (line,) = result.stderr.strip().splitlines()
    assert line == "loopfix: error: --script-args: No closing quotation"


def test_an_unknown_rule_on_the_command_line_is_an_error(repo):
    result = invoke("check", ".", "--select", "LF9")
    assert result.exit_code == 2 and "unknown rule code 'LF9'" in result.stderr


@pytest.mark.parametrize(
    "comment, suppressed",
    [
        ("  # noqa: LF001", True),
        ("  # noqa", True),
        ("  # NOQA:LF004,LF001", True),
        ("  # noqa: LF002", False),
    ],
)
def test_noqa_on_the_reported_line_suppresses_it(repo, comment, suppressed):
    lines = BUGGY.splitlines(keepends=True)
    lines[15] = lines[15].rstrip("\n") + comment + "\n"  # line 16 is the reported one
    (repo / "train.py").write_text("".join(lines))
    result = invoke("check", "train.py")
    assert (result.exit_code == 0) is suppressed, result.stdout


def test_noqa_inside_a_string_does_not_count_and_a_file_noqa_skips_the_file(repo):
    lines = BUGGY.splitlines(keepends=True)
    lines[15] = lines[15].rstrip("\n") + '; note = "# noqa"\n'
    (repo / "train.py").write_text("".join(lines))
    assert invoke("check", "train.py").exit_code == 1
    (repo / "train.py").write_text("# loopfix: noqa\n" + BUGGY)
    assert invoke("check", "train.py").exit_code == 0
    assert invoke("apply", "--no-verify", "train.py").exit_code == 0
    assert (repo / "train.py").read_text() == "# loopfix: noqa\n" + BUGGY


# -- cache and parallel jobs ---------------------------------------------------------------


def settings(tmp_path: Path, config: Config | None = None) -> ScanSettings:
    return ScanSettings(config or Config(), str(tmp_path / "cache"))


def test_an_unchanged_file_comes_from_the_cache(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(BUGGY)
    first = analyse_path(path, settings(tmp_path))
    second = analyse_path(path, settings(tmp_path))
    assert (first.cached, second.cached) == (False, True)
    assert second.findings == first.findings and second.changed


def test_a_warm_scan_reads_a_shared_dependency_once_and_the_next_scan_again(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    (tmp_path / "models.py").write_text(
        "import torch.nn as nn\n\n\nclass Net(nn.Linear):\n    pass\n"
    )
    files = []
    for index in range(3):
        files.append(tmp_path / f"train_{index}.py")
        files[-1].write_text(f"from models import Net  # {index}\n\n" + BUGGY)
    reads = []
    monkeypatch.setattr(
        project_module, "read_disk", lambda path: reads.append(path) or path.read_text()
    )
    cold = list(scan_module.scan(files, settings(tmp_path), jobs=1))
    assert [r.cached for r in cold] == [False] * 3
    assert all(str((tmp_path / "models.py").resolve()) in r.dependencies for r in cold)
    reads.clear()
    warm = list(scan_module.scan(files, settings(tmp_path), jobs=1))
    assert [r.cached for r in warm] == [True] * 3 and len(reads) == 1
    (tmp_path / "models.py").write_text("import torch.nn as nn\n\nNet = nn.Linear\n")
    again = list(scan_module.scan(files, settings(tmp_path), jobs=1))
    assert [r.cached for r in again] == [False] * 3


def test_the_cache_is_invalidated_by_content_version_and_settings(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(BUGGY)
    analyse_path(path, settings(tmp_path))
    path.write_text(BUGGY + "# edited\n")
    assert not analyse_path(path, settings(tmp_path)).cached
    assert analyse_path(path, settings(tmp_path)).cached
    ignoring = parse_config({"ignore": ["LF001"]})
    changed = analyse_path(path, settings(tmp_path, ignoring))
    assert not changed.cached and changed.findings == []
    monkeypatch.setattr(cache_module, "__version__", "999.0")
    assert not analyse_path(path, settings(tmp_path)).cached


def test_no_cache_writes_no_cache(repo):
    assert invoke("check", ".", "--no-cache").exit_code == 1
    assert not (repo / ".loopfix_cache").exists()
    assert invoke("check", ".").exit_code == 1
    assert (repo / ".loopfix_cache" / "CACHEDIR.TAG").is_file()
    assert reported_files(invoke("check", ".")) == {"train.py"}  # from the cache


def test_concurrent_runs_share_one_cache_safely(tmp_path):
    for index, case in enumerate(load_cases()):
        shutil.copy(case.before, tmp_path / f"case_{index}.py")
    command = [sys.executable, "-m", "loopfix", "check", "--format", "json", "--jobs", "1", "."]
    runs = [
        subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, text=True) for _ in range(3)
    ]
    outputs = [json.loads(run.communicate()[0]) for run in runs]
    alone = subprocess.run([*command, "--no-cache"], cwd=tmp_path, capture_output=True, text=True)
    assert all(output == json.loads(alone.stdout) for output in outputs)
    entries = list((tmp_path / ".loopfix_cache").rglob("*.json"))
    assert entries and all(json.loads(e.read_text()) for e in entries)
    assert not list((tmp_path / ".loopfix_cache").rglob("*.tmp"))


def test_parallel_jobs_give_the_same_reports_as_one(tmp_path):
    files = []
    for index, case in enumerate(load_cases() * 2):
        files.append(tmp_path / f"case_{index}.py")
        shutil.copy(case.before, files[-1])
    (tmp_path / "plain.py").write_text("print('no tensors here')\n")
    files.append(tmp_path / "plain.py")
    one = list(scan_module.scan(files, ScanSettings(Config(), None), jobs=1))
    two = list(scan_module.scan(files, ScanSettings(Config(), None), jobs=2))
    assert one == two and len(one) == len(files)
    assert one[-1] == FileReport(str(files[-1]), skipped="no backward pass")


def enough_files_for_workers(folder, text: str) -> list:
    """As many files holding `text` as a scan needs before it starts worker processes."""
    files = [folder / f"m{index}.py" for index in range(scan_module.SEQUENTIAL_BELOW)]
    for path in files:
        path.write_text(text)
    return files


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_scan_collects_garbage_less_often_and_restores_the_collector_after(
    tmp_path, monkeypatch, jobs
):
    files = enough_files_for_workers(tmp_path, "x = 1\n")
    # each report names the thresholds its analysis ran under (a forked worker's are its own)
    monkeypatch.setattr(
        scan_module, "analyse_path", lambda path, _: FileReport(str(gc.get_threshold()))
    )
    before = gc.get_threshold()
    seen = {r.path for r in scan_module.scan(files, ScanSettings(Config(), None), jobs=jobs)}
    assert seen == {str(scan_module.COLLECTION_THRESHOLDS)} != {str(before)}
    assert gc.get_threshold() == before


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_scan_freezes_what_outlives_each_file_and_hands_it_back_after(
    tmp_path, monkeypatch, jobs
):
    files = enough_files_for_workers(tmp_path, "loss.backward()\n")
    # each report names how many objects were frozen when its file's analysis started
    monkeypatch.setattr(
        scan_module, "_analyse", lambda path, *_: FileReport(str(gc.get_freeze_count()))
    )
    assert gc.get_freeze_count() == 0
    seen = [int(r.path) for r in scan_module.scan(files, ScanSettings(Config(), None), jobs=jobs)]
    # only the first file of each process starts before anything was frozen
    assert seen[0] == 0 and 1 <= seen.count(0) <= jobs
    assert gc.get_freeze_count() == 0


def test_a_progress_bar_only_on_a_terminal_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert _progress(500, OutputFormat.text).enabled
    assert not _progress(10, OutputFormat.text).enabled  # a short run
    assert not _progress(500, OutputFormat.json).enabled
    monkeypatch.setenv("CI", "true")
    assert not _progress(500, OutputFormat.text).enabled
    monkeypatch.setattr(sys.stderr, "isatty", lambda: False)
    monkeypatch.delenv("CI")
    assert not _progress(500, OutputFormat.text).enabled


# -- output formats and exit codes ---------------------------------------------------------


def test_sarif_has_rule_metadata_and_repository_relative_uris(repo):
    (repo / "sub").mkdir()
    (repo / "sub" / "gan.py").write_text(GAN)
    result = invoke("check", ".", "--format", "sarif")
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == [f"LF00{n}" for n in range(1, 10)]
    assert all(r["shortDescription"]["text"] and r["help"]["text"] for r in driver["rules"])
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in run["results"]
    }
    assert uris == {"train.py", "sub/gan.py"}
    lf001 = next(r for r in run["results"] if r["ruleId"] == "LF001")
    region = lf001["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (16, 14)
    assert driver["rules"][lf001["ruleIndex"]]["id"] == "LF001" and lf001["level"] == "error"


def test_github_annotations(repo):
    result = invoke("check", ".", "--format", "github")
    (line,) = result.stdout.splitlines()
    assert line.startswith("::error file=train.py,line=16,col=14,")
    assert "title=LF001 hidden-state-not-detached::" in line


def test_statistics_and_exit_zero(repo):
    (repo / "gan.py").write_text(GAN)
    (repo / "other.py").write_text(BUGGY.replace("hidden", "state"))
    result = invoke("check", ".", "--statistics", "--exit-zero")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "    2  LF001  hidden-state-not-detached  [*] 2 fixable",
        "    1  LF002  step-before-backward  [*] 1 fixable",
    ]


def test_findings_only_reports_the_same_findings_without_fix_markers(repo):
    (repo / "gan.py").write_text(GAN)
    planned = json.loads(invoke("check", ".", "--format", "json").stdout)
    quick = json.loads(invoke("check", ".", "--format", "json", "--findings-only").stdout)
    fix_fields = ("fixable", "fix_title", "fix_applicability", "fix_edits")
    strip = [{k: v for k, v in row.items() if k not in fix_fields} for row in planned]
    assert strip == [{k: v for k, v in row.items() if k not in fix_fields} for row in quick]
    assert all(row["fixable"] for row in planned) and not any(row["fixable"] for row in quick)


# -- interactive review --------------------------------------------------------------------


def test_interactive_no_writes_nothing_and_yes_writes(repo):
    result = invoke("apply", "--interactive", "--no-verify", ".", input="n\n")
    assert "LF001 hidden-state-not-detached" in result.stdout and "Apply this fix" in result.stdout
    assert (repo / "train.py").read_text() == BUGGY
    result = invoke("apply", "--interactive", ".", input="y\n")
    assert "Verification: LF001 line 16: equivalent" in result.stdout
    assert (repo / "train.py").read_text() == FIXED and result.exit_code == 0


def test_interactive_quit_keeps_what_was_accepted(repo):
    (repo / "zzz.py").write_text(BUGGY.replace("hidden", "state"))
    invoke("apply", "--interactive", "--no-verify", ".", input="y\nq\n")
    assert (repo / "train.py").read_text() == FIXED
    assert (repo / "zzz.py").read_text() == BUGGY.replace("hidden", "state")


def test_interactive_all_accepts_the_rest(repo):
    (repo / "zzz.py").write_text(BUGGY.replace("hidden", "state"))
    invoke("apply", "--interactive", "--no-verify", ".", input="a\n")
    assert (repo / "train.py").read_text() == FIXED
    assert (repo / "zzz.py").read_text() == FIXED.replace("hidden", "state")


TWO_LOOPS = BUGGY + "\n\n" + BUGGY.split("\n\n\n", 1)[-1].replace("hidden", "second")


def test_interactive_part_of_a_file_is_checked_and_verified_again(repo):
    (repo / "train.py").write_text(TWO_LOOPS)
    assert invoke("check", "train.py").stdout.count("LF001") == 2
    result = invoke("apply", "--interactive", "train.py", input="y\nn\n")
    written = (repo / "train.py").read_text()
    assert written != TWO_LOOPS and invoke("check", "train.py").stdout.count("LF001") == 1
    assert result.exit_code == 0, result.stdout + result.stderr


NEEDLESS_RETAIN = (CORPUS / "lf004_needless_retain_plain_loop" / "before.py").read_text()


def test_interactive_part_of_a_file_is_rechecked_with_the_run_s_rules(repo):
    """A rule the run ignores (LF004 here) must not make a partial file look unsafe."""
    (repo / "train.py").write_text(TWO_LOOPS + "\n\n" + NEEDLESS_RETAIN.split("\n", 2)[2])
    assert "LF004" in invoke("check", "train.py").stdout
    result = invoke(
        "apply", "--interactive", "--no-verify", "--ignore", "LF004", "train.py", input="y\nn\n"
    )
    assert "do not stand alone" not in result.stdout, result.stdout
    assert invoke("check", "train.py", "--ignore", "LF004").stdout.count("LF001") == 1


# -- pre-commit ----------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_pre_commit_hooks_run_in_a_throw_away_repository(tmp_path):
    """Our `.pre-commit-hooks.yaml`, run by pre-commit itself. The hooks run as `system`
    hooks (the loopfix installed here) instead of pre-commit building a virtualenv with its
    own torch: everything else (entry, file types, serial runs) is the hooks file's."""
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    bin_folder = str(Path(sys.executable).parent)
    local = [{**hook, "language": "system"} for hook in hooks]
    (tmp_path / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": local}]})
    )
    env = {**os.environ, "PATH": bin_folder + os.pathsep + os.environ.get("PATH", "")}
    env["PRE_COMMIT_HOME"] = str(tmp_path / ".pre-commit-home")
    env.pop("CI", None)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, env=env)

    git("init", "-q")
    git("config", "user.email", "dev@example.com")
    git("config", "user.name", "dev")
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text("print('hello')\n")
    git("add", ".")

    def pre_commit(hook: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "pre_commit", "run", hook, "--all-files"]
        return subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)

    checked = pre_commit("loopfix-check")
    assert checked.returncode == 1 and "train.py:16:14: LF001" in checked.stdout
    fixed = pre_commit("loopfix-fix")
    assert fixed.returncode == 1  # pre-commit fails a hook that changed files
    assert "files were modified by this hook" in fixed.stdout
    assert (tmp_path / "train.py").read_text() == FIXED
    git("add", ".")
    assert pre_commit("loopfix-check").returncode == 0


def _registry_unreachable(folder: Path) -> str | None:
    """Why pip cannot fetch packages here (a quick probe), or None."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--timeout", "10"]
    command += ["--retries", "0", "-q", "-d", str(folder), "typer"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "the package registry did not answer within 60 s"
    if done.returncode != 0:
        return f"the package registry is unreachable: {done.stderr.strip()[-300:]}"
    return None


def _throw_away_repository(folder: Path, env: dict) -> str:
    """A git repository at `folder` holding the files loopfix tracks, as they are in this
    working tree, in one commit; its hash."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    for name in filter(None, listed.stdout.split("\0")):
        if (ROOT / name).is_file():  # a tracked file deleted in the working tree is left out
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, folder / name)
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "loopfix"]):
        subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env=env)
    head = ["git", "rev-parse", "HEAD"]
    return subprocess.run(head, cwd=folder, capture_output=True, text=True, env=env).stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_pre_commit_installs_the_hooks_as_shipped_without_torch(tmp_path):
    """The hooks as users get them: pre-commit clones a repository of loopfix, builds the
    hooks' virtualenv itself (`language: python`) and pip-installs loopfix with its
    dependencies from the package registry. That environment has no torch; `loopfix-check`
    needs none, and `loopfix-fix` verifies with the project's interpreter, not the hook's."""
    if reason := _registry_unreachable(tmp_path / "probe"):
        pytest.skip(reason)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "CI")}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "home"), GIT_AUTHOR_NAME="dev")
    env.update(GIT_AUTHOR_EMAIL="dev@example.com", GIT_COMMITTER_NAME="dev")
    env.update(GIT_COMMITTER_EMAIL="dev@example.com")
    (tmp_path / "loopfix").mkdir()
    rev = _throw_away_repository(tmp_path / "loopfix", env)
    project = tmp_path / "project"
    project.mkdir()

    def pre_commit(hook: str, *args: str, **hook_settings) -> subprocess.CompletedProcess:
        repository = {"repo": str(tmp_path / "loopfix"), "rev": rev}
        repository["hooks"] = [{"id": hook, **hook_settings}]
        (project / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [repository]}))
        command = [sys.executable, "-m", "pre_commit", "run", hook, *args]
        return subprocess.run(command, cwd=project, capture_output=True, text=True, env=env)

    subprocess.run(["git", "init", "-q"], cwd=project, check=True, env=env)
    (project / ".gitignore").write_text(".venv/\n")
    (project / "train.py").write_text(BUGGY)
    (project / "clean.py").write_text("print('hello')\n")
    subprocess.run(["git", "add", "."], cwd=project, check=True, env=env)

    checked = pre_commit("loopfix-check", "--all-files")  # builds the environment
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "train.py:16:14: LF001" in checked.stdout and "clean.py" not in checked.stdout
    assert pre_commit("loopfix-check", "--files", "clean.py").returncode == 0

    # pre-commit's environment for the hooks: loopfix there, torch not
    (python,) = (tmp_path / "home").glob("repo*/py_env-*/bin/python")
    has = "import importlib.util, sys; sys.exit(importlib.util.find_spec(sys.argv[1]) is None)"
    assert subprocess.run([python, "-c", has, "loopfix"], env=env).returncode == 0
    assert subprocess.run([python, "-c", has, "torch"], env=env).returncode == 1

    # no torch reachable (the hook's VIRTUAL_ENV is loopfix's own, no .venv): left alone, why
    refused = pre_commit("loopfix-fix", "--all-files")
    assert refused.returncode == 1 and (project / "train.py").read_text() == BUGGY
    why = f"{python} has no torch (pip install 'loopfix[verify]', or pass --python)"
    assert f"train.py: not written: LF001 line 16: unverified: {why}" in refused.stdout
    assert "1 fix(es) could not be verified by running the code" in refused.stdout

    unverified = pre_commit("loopfix-fix", "--all-files", args=["--no-verify"])
    assert "Verification skipped (--no-verify)." in unverified.stdout, unverified.stdout
    assert "files were modified by this hook" in unverified.stdout
    assert (project / "train.py").read_text() == FIXED

    # a .venv at the project's root is the project's interpreter: here one that reaches torch
    (project / "train.py").write_text(BUGGY)
    venv = [sys.executable, "-m", "venv", "--without-pip", ".venv"]
    subprocess.run(venv, cwd=project, check=True)
    (site,) = (project / ".venv").glob("lib/python*/site-packages")
    (site / "tests_torch.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    verified = pre_commit("loopfix-fix", "--all-files")
    assert "loopfix: wrote train.py: LF001" in verified.stdout, verified.stdout
    assert "equivalent" in verified.stdout and "files were modified by this hook" in verified.stdout
    assert (project / "train.py").read_text() == FIXED


def test_sarif_carries_fixes_notifications_help_and_the_what_it_does_text(repo):
    (repo / "sub").mkdir()
    (repo / "sub" / "broken.py").write_text("def f(:\n    loss.backward()\n")
    result = invoke("check", ".", "--format", "sarif", "--no-cache")
    (run,) = json.loads(result.stdout)["runs"]
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] is False
    (notification,) = invocation["toolExecutionNotifications"]
    location = notification["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "sub/broken.py"
    assert "syntax error" in notification["message"]["text"]
    (lf001,) = [r for r in run["results"] if r["ruleId"] == "LF001"]
    (change,) = lf001["fixes"][0]["artifactChanges"]
    assert change["artifactLocation"]["uri"] == "train.py"
    (replacement,) = change["replacements"]
    assert replacement["insertedContent"]["text"].strip() == "h = h.detach()"
    rules = run["tool"]["driver"]["rules"]
    assert rules[0]["fullDescription"]["text"].startswith("Finds a recurrent state")
    assert rules[0]["helpUri"].endswith("docs/rules.md#lf001-hidden-state-not-detached")
    assert "autograd" in rules[0]["properties"]["tags"]


def test_the_shipped_rules_page_is_current():
    from loopfix.report import rules_markdown

    assert (ROOT / "docs" / "rules.md").read_text() == rules_markdown()


def test_github_annotations_are_repository_relative_and_name_unparsable_files(repo, monkeypatch):
    (repo / "sub").mkdir()
    (repo / "sub" / "broken.py").write_text("def f(:\n    loss.backward()\n")
    monkeypatch.chdir(repo / "sub")
    result = invoke("check", "..", "--format", "github", "--no-cache")
    lines = result.stdout.splitlines()
    assert any(line.startswith("::error file=train.py,line=16,col=14,") for line in lines)
    assert any(
        line.startswith("::error file=sub/broken.py,title=loopfix,line=1::") for line in lines
    )


def test_sarif_validates_against_the_official_2_1_0_schema(repo):
    """Findings with fixes, a file that does not parse (a tool notification): the whole log
    against the OASIS schema (`tests/data`, with its notice)."""
    import jsonschema

    (repo / "sub").mkdir()
    (repo / "sub" / "gan.py").write_text(GAN)
    (repo / "sub" / "broken.py").write_text("def f(:\n    loss.backward()\n")
    log = json.loads(invoke("check", ".", "--format", "sarif", "--no-cache").stdout)
    assert (
        log["runs"][0]["results"] and log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    )
    schema = json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text())
    jsonschema.Draft4Validator(schema).validate(log)
