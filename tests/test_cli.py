"""The command line, as a user meets it: output formats, exit codes, diffs, writes."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from loopfix.cli import app
from loopfix.refactor import PlannedChange, apply_changes

from corpus_cases import CORPUS, PROJECTS, UNFIXABLE, UNSAFE

runner = CliRunner()
BUGGY = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
FIXED = (CORPUS / "lf001_gru_state_init_once" / "after.py").read_text()
CLEAN = (CORPUS / "lf001_ok_detach_each_batch" / "before.py").read_text()
# Its fix inserts after the last line: the case for files without a final newline.
TAIL_BUGGY = (CORPUS / "lf001_stacked_lstmcell_tbptt_k" / "before.py").read_text()
TAIL_FIXED = (CORPUS / "lf001_stacked_lstmcell_tbptt_k" / "after.py").read_text()


def invoke(*args: str):
    return runner.invoke(app, list(args))


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(BUGGY)
    (tmp_path / "clean.py").write_text(CLEAN)
    return tmp_path


def test_check_prints_one_line_per_finding_with_fix_marker(project):
    result = invoke("check", ".")
    assert result.exit_code == 1
    lines = [line for line in result.stdout.splitlines() if "LF001" in line]
    assert lines == [
        "train.py:16:14: LF001 [*] `h` carries the previous iteration's autograd graph into "
        "the next backward(), which then goes through a freed graph; the batches continue one "
        "stream (each batch is `series[start:start + 10]`, consecutive in one sequence): "
        "detach it"
    ]


def test_check_json_has_the_documented_fields(project):
    result = invoke("check", "train.py", "--format", "json")
    assert result.exit_code == 1
    (row,) = json.loads(result.stdout)
    assert row["path"] == "train.py" and row["rule"] == "LF001"
    assert row["name"] == "hidden-state-not-detached" and row["fixable"] is True
    assert (row["line"], row["column"], row["end_line"], row["end_column"]) == (16, 14, 16, 15)
    assert row["message"].startswith("`h` carries")


def test_check_exits_zero_on_clean_code(project):
    assert invoke("check", "clean.py").exit_code == 0


def test_unparsable_file_is_named_exit_two_and_others_still_checked(project):
    (project / "broken.py").write_text("loss.backward()\ndef oops(:\n    pass\n")
    result = invoke("check", ".")
    assert result.exit_code == 2
    assert "broken.py:2:" in result.stderr and "syntax error" in result.stderr
    assert "train.py:16:14: LF001" in result.stdout


def test_missing_path_is_a_usage_error(project):
    result = invoke("check", "nope.py")
    assert result.exit_code == 2 and "nope.py" in result.stderr


def test_folders_skip_hidden_folders_and_virtual_environments(project):
    for folder in (".hidden", "venv_here"):
        (project / folder).mkdir()
        (project / folder / "train.py").write_text(BUGGY)
    (project / "venv_here" / "pyvenv.cfg").write_text("home = /usr\n")
    result = invoke("check", ".", "--format", "json")
    assert [row["path"] for row in json.loads(result.stdout)] == ["train.py"]


def test_dry_run_prints_a_diff_git_apply_accepts_and_writes_nothing(project):
    (project / "nofinal.py").write_text(TAIL_BUGGY.rstrip("\n"))
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    result = invoke("apply", "--dry-run", ".")
    assert result.exit_code == 0
    assert "# verify: LF001 line 16: equivalent (live, cpu," in result.stdout
    assert "\x1b[" not in result.stdout  # no colour in a pipe
    assert (project / "train.py").read_text() == BUGGY
    assert "\\ No newline at end of file" in result.stdout
    assert "Would fix 2 finding(s) in 2 file(s)." in result.stderr  # said apart from the patch
    (project / "fix.patch").write_text(result.stdout)
    subprocess.run(["git", "apply", "fix.patch"], cwd=project, check=True)
    assert (project / "train.py").read_text() == FIXED
    assert (project / "nofinal.py").read_text() == TAIL_FIXED.rstrip("\n")


def test_apply_verifies_writes_the_fix_and_a_second_apply_changes_nothing(project):
    result = invoke("apply", ".")
    assert result.exit_code == 0, result.stderr
    assert (project / "train.py").read_text() == FIXED
    assert (project / "clean.py").read_text() == CLEAN
    assert not (project / ".ropeproject").exists()
    again = invoke("apply", "--dry-run", ".")
    assert again.exit_code == 0 and again.stdout == ""  # no diff: stdout stays a patch
    assert "Nothing to fix: all checks passed." in again.stderr


def test_dry_run_over_files_with_errors_only_still_says_what_it_would_fix(project):
    (project / "old.py").write_text('print "py2"\nloss.backward()\n')
    result = invoke("apply", "--dry-run", "old.py")
    assert result.exit_code == 2 and result.stdout == ""
    assert "old.py:1:1: syntax error" in result.stderr
    assert result.stderr.endswith("Would fix 0 finding(s) in 0 file(s).\n"), result.stderr


@pytest.mark.parametrize("flags", [[], ["--dry-run"], ["--no-verify"]])
def test_apply_on_a_clean_file_says_nothing_to_fix_in_one_wording(project, flags):
    result = invoke("apply", *flags, "clean.py")
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr == "Nothing to fix: all checks passed.\n"


@pytest.mark.parametrize(
    "encode",
    [
        lambda text: text.replace("\n", "\r\n").encode(),
        lambda text: b"\xef\xbb\xbf" + text.encode(),
        lambda text: ("# -*- coding: latin-1 -*-\n# caf\xe9\n" + text).encode("latin-1"),
        lambda text: ("# état caché ☃ 𝛼\n" + text).replace("\n", "\r\n").encode(),
    ],
    ids=["crlf", "bom", "latin-1", "non-ascii-crlf"],
)
def test_apply_keeps_line_endings_encoding_and_bom(project, encode):
    original = encode(BUGGY)
    (project / "train.py").write_bytes(original)
    assert invoke("apply", "--no-verify", "train.py").exit_code == 0
    assert (project / "train.py").read_bytes() == encode(FIXED)


def test_file_mode_is_preserved(project):
    (project / "train.py").chmod(0o750)
    invoke("apply", "--no-verify", "train.py")
    assert (project / "train.py").stat().st_mode & 0o777 == 0o750


def test_apply_refuses_a_file_that_changed_since_it_was_read(project):
    path = project / "train.py"
    planned = PlannedChange(path, BUGGY.encode(), FIXED.encode())
    path.write_text(BUGGY + "# edited meanwhile\n")
    written, errors = apply_changes([planned])
    assert written == [] and "changed on disk" in errors[0]
    assert path.read_text() == BUGGY + "# edited meanwhile\n"


def test_the_cache_lives_at_the_project_root_from_any_folder(tmp_path, monkeypatch):
    (tmp_path / "setup.cfg").write_text("")
    package = tmp_path / "src" / "models"
    package.mkdir(parents=True)
    (package / "train.py").write_text(BUGGY)
    monkeypatch.chdir(package)
    assert invoke("check", ".").exit_code == 1
    monkeypatch.chdir(tmp_path / "src")
    assert invoke("check", "models/train.py").exit_code == 1
    monkeypatch.chdir(tmp_path)
    assert invoke("check", "src").exit_code == 1
    caches = sorted(p.parent for p in tmp_path.rglob("CACHEDIR.TAG"))
    assert caches == [tmp_path / ".loopfix_cache"]


def test_a_cache_dir_given_on_the_command_line_is_taken_from_the_current_folder(
    tmp_path, monkeypatch
):
    (tmp_path / "pyproject.toml").write_text("[tool.loopfix]\ncache-dir = 'build/cache'\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "train.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path / "sub")
    assert invoke("check", ".").exit_code == 1
    assert (tmp_path / "build" / "cache" / "CACHEDIR.TAG").is_file()  # the setting's folder
    assert invoke("check", ".", "--cache-dir", "here").exit_code == 1
    assert (tmp_path / "sub" / "here" / "CACHEDIR.TAG").is_file()


def test_rules_lists_every_rule():
    result = invoke("rules")
    assert result.exit_code == 0
    for line in (
        "LF001  hidden-state-not-detached",
        "LF002  step-before-backward",
        "LF003  backward-through-freed-graph",
        "LF004  needless-retain-graph",
        "LF005  lr-scheduler-before-optimizer-step",
        "LF006  loss-accumulated-with-graph",
        "LF007  zero-grad-misplaced",
    ):
        assert line in result.stdout


def test_rules_aligns_its_columns_on_the_longest_name():
    from loopfix.rules import ALL_RULES

    lines = invoke("rules").stdout.splitlines()
    assert len(lines) == len(ALL_RULES)
    starts = {line.index(rule.summary) for line, rule in zip(lines, ALL_RULES, strict=True)}
    assert len(starts) == 1  # every summary begins in the same column
    longest = max(len(rule.name) for rule in ALL_RULES)
    assert starts == {len("LF001  ") + longest + 2}


@pytest.mark.parametrize("code", ["lf001", "LF002", "LF003", "LF004", "LF005", "LF006", "LF007"])
def test_explain_prints_the_documented_sections(code):
    result = invoke("explain", code)
    assert result.exit_code == 0
    for section in (
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "Use instead:",
        "## What the fix preserves",
        "## Fix safety",
    ):
        assert section in result.stdout


def test_explain_unknown_rule_is_a_usage_error():
    result = invoke("explain", "LF999")
    assert result.exit_code == 2 and "unknown rule" in result.stderr


def test_the_installed_command_runs(project):
    executable = shutil.which("loopfix", path=str(Path(sys.executable).parent))
    if executable is None:
        pytest.skip("loopfix is not installed on PATH")
    completed = subprocess.run([executable, "check", "train.py"], capture_output=True, text=True)
    assert completed.returncode == 1 and "LF001 [*]" in completed.stdout


def test_no_verify_says_so(project):
    result = invoke("apply", "--no-verify", "train.py")
    assert result.exit_code == 0 and "Verification skipped (--no-verify)" in result.stderr


def test_a_rewrite_whose_diagnosis_does_not_hold_is_not_written(project):
    # The model comes from a module loopfix cannot resolve (imported by a name built at run
    # time), so it assumes the returned state carries graph; this one returns it detached.
    # Running both versions shows the original never fails. (Imported by name, loopfix
    # follows stateful.py and reports nothing: see the next test.)
    (project / "stateful.py").write_text(
        "import torch.nn as nn\n\n\n"
        "class Stateful(nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.gru = nn.GRU(3, 4)\n\n"
        "    def forward(self, x, h):\n"
        "        out, h = self.gru(x, h)\n"
        "        return out, h.detach()\n"
    )
    script = (
        "import importlib\nimport torch\n\n"
        "Stateful = importlib.import_module('stateful').Stateful\n"
        "model = Stateful()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "h = torch.zeros(1, 2, 4)\n"
        "for step in range(3):\n"
        "    out, h = model(torch.randn(5, 2, 3), h)\n"
        "    loss = out.pow(2).mean()\n"
        "    opt.zero_grad()\n"
        "    loss.backward()\n"
        "    opt.step()\n"
    )
    (project / "loop.py").write_text(script)
    assert "LF001 [*]" in invoke("check", "loop.py").stdout
    result = invoke("apply", "loop.py")
    assert result.exit_code == 1
    assert "not written" in result.stderr and "not confirmed" in result.stderr
    assert (project / "loop.py").read_text() == script
    dynamic = "import importlib\nimport torch\n\nStateful = importlib.import_module('stateful')"
    direct = script.replace(dynamic + ".Stateful", "import torch\nfrom stateful import Stateful")
    (project / "loop.py").write_text(direct)
    assert invoke("check", "loop.py").stdout == "All checks passed!\n"  # nothing carried


def test_verify_reports_every_field_as_json(project):
    result = invoke("verify", "--format", "json", "--device", "cpu", "train.py")
    assert result.exit_code == 0, result.stdout
    (row,) = json.loads(result.stdout)
    assert row["verdict"] == "equivalent" and row["level"] == "live" and row["device"] == "cpu"
    assert row["original"].startswith("raised RuntimeError: Trying to backward")
    assert row["patched"] == "ran 3 iterations (capped)" and row["iterations"] == 3
    assert row["seconds"] > 0


def test_a_script_that_reaches_no_backward_in_time_is_run_once_and_left_unverified(project):
    """A script that fills a replay buffer for hours before it trains: the patched and the
    reference runs would spend the time limit the same way, so they are not made."""
    buggy = (project / "train.py").read_text()
    (project / "train.py").write_text("import time\ntime.sleep(60)\n" + buggy)
    result = invoke("verify", "--format", "json", "--device", "cpu", "--timeout", "2", "train.py")
    (row,) = json.loads(result.stdout)
    assert row["verdict"] == "unverified: the original reached no backward in 2 s (--timeout)"
    assert row["original"] == "timed out after 2 s"
    assert row["patched"].startswith("not run: the original reached no backward")
    assert result.exit_code == 1


def test_verified_apply_over_a_whole_corpus_copy(tmp_path, monkeypatch):
    copy = tmp_path / "corpus"
    # unfixable and unsafe cases keep `apply` at exit 1; project cases are specified alone
    unfixable = [case.name for case in UNFIXABLE + UNSAFE + PROJECTS]
    shutil.copytree(
        CORPUS, copy, ignore=shutil.ignore_patterns("after.py", "__pycache__", *unfixable)
    )
    monkeypatch.chdir(tmp_path)
    result = invoke("apply", "--device", "cpu", "corpus")
    assert result.exit_code == 0, result.stderr[-3000:]
    for case in sorted(copy.iterdir()):
        expected = CORPUS / case.name / "after.py"
        written = (case / "before.py").read_bytes()
        original = (CORPUS / case.name / "before.py").read_bytes()
        assert written == (expected.read_bytes() if expected.exists() else original), case.name
    assert invoke("check", "corpus").exit_code == 0


# "backward, step, backward, step" of one optimizer: only the unsafe "step once" fix exists.
TWO_STEPS = (CORPUS / "lf002_one_optimizer_two_steps" / "before.py").read_text()
TWO_STEPS_FIXED = (CORPUS / "lf002_one_optimizer_two_steps" / "after.py").read_text()


@pytest.fixture
def unsafe_project(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(TWO_STEPS)
    return tmp_path


def test_check_marks_an_unsafe_fix_and_says_how_to_enable_it(unsafe_project):
    result = invoke("check", "train.py")
    assert result.exit_code == 1
    (line,) = result.stdout.splitlines()
    assert " LF002 [-] " in line
    assert "1 hidden fix(es) can be enabled with `--unsafe-fixes`" in result.stderr
    enabled = invoke("check", "train.py", "--unsafe-fixes")
    assert "1 fixable with `loopfix apply --unsafe-fixes` (1 unsafe)" in enabled.stderr


# an InfoGAN-style loop: a needless retain_graph (LF004, safe fix) and an information loss
# backpropagated after the generator stepped (LF002, whose recompute fix clashes with LF004's)
INFO_GAN = """\
import torch
import torch.nn as nn


class D(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 16))
        self.real = nn.Linear(16, 1)
        self.code = nn.Linear(16, 2)

    def forward(self, x):
        h = self.body(x)
        return torch.sigmoid(self.real(h)), self.code(h)


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 4))
d = D()
bce = nn.BCELoss()
opt_d = torch.optim.Adam(d.parameters(), lr=1e-3)
opt_g = torch.optim.Adam(G.parameters(), lr=1e-3)
opt_info = torch.optim.Adam(list(G.parameters()) + list(d.parameters()), lr=1e-3)
ones, zeros = torch.ones(8, 1), torch.zeros(8, 1)
for step in range(3):
    x, z, c = torch.randn(8, 4), torch.randn(8, 2), torch.randn(8, 2)
    opt_d.zero_grad()
    real, _ = d(x)
    fake, _ = d(G(torch.cat([z, c], 1)))
    d_loss = bce(real, ones) + bce(fake, zeros)
    d_loss.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    fake, code = d(G(torch.cat([z, c], 1)))
    g_loss = bce(fake, ones)
    g_loss.backward(retain_graph=True)
    opt_g.step()
    info_loss = (code - c).pow(2).mean()
    info_loss.backward()
    opt_info.step()
"""


def test_an_unsafe_fix_that_clashes_with_a_safe_one_is_not_offered_as_hidden(tmp_path, monkeypatch):
    """`--unsafe-fixes` would drop it (it cannot be proven with the safe fix written), so
    `check` does not say it can be enabled: the finding says to apply again instead."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "info.py").write_text(INFO_GAN)
    result = invoke("check", "--no-cache", "info.py")
    assert "hidden fix" not in result.stderr and "1 fixable" in result.stderr, result.output
    assert "run `loopfix apply` again once that one is written" in result.stdout
    enabled = invoke("check", "--no-cache", "--unsafe-fixes", "info.py")
    assert "1 fixable with `loopfix apply --unsafe-fixes` (0 unsafe)" in enabled.stderr


def test_json_and_sarif_carry_the_fix_applicability(unsafe_project):
    (row,) = json.loads(invoke("check", "train.py", "--format", "json").stdout)
    assert row["fixable"] is False and row["fix_applicability"] == "unsafe"
    assert "fix_applied" not in row and row["fix_title"].startswith("Recompute ")
    (row,) = json.loads(invoke("check", "train.py", "--format", "json", "--unsafe-fixes").stdout)
    assert row["fixable"] is True
    log = json.loads(invoke("check", "train.py", "--format", "sarif").stdout)
    (result,) = log["runs"][0]["results"]
    assert result["properties"] == {"fixable": False, "fixApplicability": "unsafe"}
    (row,) = json.loads(invoke("check", "train.py", "--format", "json").stdout)
    statistics = invoke("check", "train.py", "--statistics").stdout
    assert "[-] 1 hidden unsafe fix(es)" in statistics and "[*]" not in statistics
    enabled = invoke("check", "train.py", "--unsafe-fixes")
    assert " LF002 [*] " in enabled.stdout  # fixable with the run's settings, as Ruff marks it


def test_apply_writes_an_unsafe_fix_only_with_unsafe_fixes(unsafe_project):
    result = invoke("apply", "--device", "cpu", "train.py")
    assert result.exit_code == 1 and (unsafe_project / "train.py").read_text() == TWO_STEPS
    assert "have only an unsafe fix" in result.stderr
    dry = invoke("apply", "--dry-run", "--device", "cpu", "--unsafe-fixes", "train.py")
    assert "# verify: LF002 line 16: changed as intended: " in dry.stdout
    assert (unsafe_project / "train.py").read_text() == TWO_STEPS
    result = invoke("apply", "--device", "cpu", "--unsafe-fixes", "train.py")
    assert result.exit_code == 0, result.stderr
    assert (unsafe_project / "train.py").read_text() == TWO_STEPS_FIXED


def test_unsafe_fixes_can_be_set_in_pyproject_and_turned_off_by_a_flag(unsafe_project):
    (unsafe_project / "pyproject.toml").write_text("[tool.loopfix]\nunsafe-fixes = true\n")
    (row,) = json.loads(invoke("check", "train.py", "--format", "json").stdout)
    assert row["fixable"] is True
    off = invoke("check", "train.py", "--format", "json", "--no-unsafe-fixes")
    assert json.loads(off.stdout)[0]["fixable"] is False
    (unsafe_project / "pyproject.toml").write_text('[tool.loopfix]\nunsafe-fixes = "yes"\n')
    bad = invoke("check", "train.py")
    assert bad.exit_code == 2
    assert "[tool.loopfix] unsafe-fixes: must be true or false" in bad.stderr


def test_check_and_apply_need_no_torch_and_verify_says_in_one_line_that_it_does(project):
    """torch is only the `verify` extra: with it unimportable, `check` and `apply --no-verify`
    work, and `verify` names the interpreter without torch in each verdict."""
    code = (
        "import sys\n"
        "sys.modules['torch'] = None  # importing torch now raises ImportError\n"
        "from typer.testing import CliRunner\n"
        "from loopfix.cli import app\n"
        "runner = CliRunner()\n"
        "check = runner.invoke(app, ['check', '--no-cache', 'train.py'])\n"
        "verify = runner.invoke(app, ['verify', '--no-cache', '--python', sys.executable, "
        "'train.py'])\n"
        "apply = runner.invoke(app, ['apply', '--no-cache', '--no-verify', 'train.py'])\n"
        "print(check.exit_code, verify.exit_code, apply.exit_code)\n"
        "print(verify.stdout)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    codes, verdict = done.stdout.splitlines()[:2]
    assert codes == "1 1 0"
    assert "LF001 unverified: " in verdict and "has no torch (pip install 'loopfix[verify]'" in (
        verdict
    )
    assert (project / "train.py").read_text() == FIXED


def test_apply_names_each_file_it_wrote_with_its_verdicts_and_verify_says_when_idle(project):
    result = invoke("apply", "--device", "cpu", ".")
    assert result.exit_code == 0, result.stderr
    assert "loopfix: wrote train.py: LF001 line 16: equivalent (live, cpu, 3 iterations" in (
        result.stderr
    )
    idle = invoke("verify", "--device", "cpu", "clean.py")
    assert idle.exit_code == 0
    assert idle.stdout.startswith("No planned rewrite to verify")
    verified = invoke("verify", "--device", "cpu", "--format", "json", "train.py")
    assert json.loads(verified.stdout) == []  # fixed by the apply above


def test_check_imports_neither_rope_nor_the_lsp_stack_nor_torch(project):
    """`check` starts fast: what only `apply`, the language server or verification need is
    imported when they run (bench/startup.py measures the wall time). pydantic is what typer
    0.29 imports to coerce every option (0.1 s); pyproject.toml keeps typer below it."""
    code = (
        "import sys\n"
        "from loopfix.cli import main\n"
        "sys.argv = ['loopfix', 'check', '--no-cache', 'train.py', 'clean.py']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = ('rope', 'pygls', 'lsprotocol', 'torch', 'rich.progress', 'pydantic')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr


# -- Ruff's command-line habits ---------------------------------------------------------------


def test_version_flags():
    for flag in ("--version", "-V"):
        result = invoke(flag)
        assert result.exit_code == 0 and result.stdout.strip() == "loopfix 0.1.0"


def test_check_without_a_path_checks_the_current_folder_and_says_when_all_passed(project):
    result = invoke("check")
    assert result.exit_code == 1 and "train.py:16:14: LF001" in result.stdout
    (project / "train.py").write_text(FIXED)
    clean = invoke("check", "--no-cache")
    assert clean.exit_code == 0 and clean.stdout == "All checks passed!\n"


def test_an_empty_folder_is_a_warning_not_a_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("check")
    assert result.exit_code == 0 and result.stdout == ""
    assert "warning: No Python files found under the given path(s)" in result.stderr


def test_output_format_alias_output_file_quiet_and_verbose(project):
    (project / "notes.py").write_text("print('no training here')\n")
    result = invoke("check", "--output-format", "json", "-o", "report.json", ".")
    assert result.exit_code == 1 and result.stdout == ""
    (row,) = json.loads((project / "report.json").read_text())
    assert row["rule"] == "LF001"
    quiet = invoke("check", "-q", ".")
    assert quiet.stderr == "" and "LF001" in quiet.stdout
    verbose = invoke("check", "-v", "--no-cache", ".")
    assert "loopfix: skipped notes.py: no backward pass" in verbose.stderr


def test_apply_quiet_writes_without_a_summary(project):
    result = invoke("apply", "-q", "--no-verify", "--no-cache", "train.py")
    assert result.exit_code == 0 and result.stderr == ""
    assert (project / "train.py").read_text() == FIXED


def test_statistics_honour_json(project):
    result = invoke("check", "--statistics", "--format", "json", ".")
    assert json.loads(result.stdout) == [
        {
            "code": "LF001",
            "name": "hidden-state-not-detached",
            "count": 1,
            "fixable": 1,
            "unsafe": 0,
        }
    ]


def test_stdin_is_checked_as_the_named_file_and_apply_prints_the_fixed_source(project):
    (project / "pyproject.toml").write_text(
        '[tool.loopfix]\nper-file-ignores = { "legacy/*" = ["LF001"] }\n'
    )
    checked = runner.invoke(app, ["check", "--stdin-filename", "sub/train.py", "-"], input=BUGGY)
    assert checked.exit_code == 1 and checked.stdout.startswith("sub/train.py:16:14: LF001")
    ignored = runner.invoke(app, ["check", "--stdin-filename", "legacy/train.py", "-"], input=BUGGY)
    assert ignored.exit_code == 0  # per-file-ignores apply by the given path
    fixed = runner.invoke(
        app, ["apply", "--device", "cpu", "--stdin-filename", "train.py", "-"], input=BUGGY
    )
    assert fixed.exit_code == 0 and fixed.stdout == FIXED
    assert "LF001 line 16: equivalent" in fixed.stderr
    missing = runner.invoke(app, ["check", "-"], input=BUGGY)
    assert missing.exit_code == 2 and "needs --stdin-filename" in missing.stderr


def test_show_fixes_lists_each_fix_written(project):
    result = invoke("apply", "--device", "cpu", "--show-fixes", "train.py")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "- train.py:",
        "    LF001 line 16: Detach `h` after the call that produces it",
    ]
