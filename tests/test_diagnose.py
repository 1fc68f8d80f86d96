"""`loopfix diagnose -- python SCRIPT ...`: the user's command runs instrumented in a child,
and the error it raises is explained in the user's lines, with the static finding there (its
fix as `check` prints it). Driven as a user would, through the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
DATA = Path(__file__).resolve().parent / "data" / "diagnose"


def diagnose(folder: Path, *command: str, verify: bool = False) -> tuple[int, dict]:
    """Run `loopfix diagnose` in `folder` with this interpreter (which has torch)."""
    arguments = [sys.executable, "-m", "loopfix", "diagnose", "--format", "json"]
    arguments += ["--python", sys.executable, *([] if verify else ["--no-verify"])]
    done = subprocess.run(
        [*arguments, "--", *command], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def fix_of(path: Path, line: int) -> tuple[str, str]:
    """(rule, fix title) of `loopfix check`'s finding on that line."""
    result = analyse_source(SourceFile.read(path))
    found = [f for f in result.findings if result.source.position(f.start)[0] == line]
    assert found, f"no finding on line {line}"
    return found[0].rule, found[0].fix.title if found[0].fix else ""


def test_a_freed_graph_is_traced_to_the_variable_that_carried_it_and_its_fix():
    folder = CORPUS / "lf001_lstm_word_lm_slicing"
    code, report = diagnose(folder, "python", "before.py", verify=True)
    assert code == 1 and report["status"] == "diagnosed"
    facts = report["facts"]
    assert facts["kind"] == "freed graph"
    assert facts["variable"]["name"] == "hidden" and facts["variable"]["read_at"]["line"] == 35
    assert facts["freed_by"]["line"]["line"] == 38 and facts["freed_by"]["iteration"] == 1
    (row,) = report["findings"]
    assert (row["rule"], row["fix"]) == fix_of(folder / "before.py", row["line"])
    assert row["line"] == 35 and row["verdict"] == "equivalent"
    assert "hidden = tuple(s.detach() for s in hidden)" in row["diff"]


def test_a_stale_weight_names_the_parameter_the_step_and_the_forward():
    folder = CORPUS / "lf002_gan_discriminator_to_device"
    code, report = diagnose(folder, "python", "before.py")
    assert code == 1
    facts = report["facts"]
    assert facts["kind"] == "version"
    assert facts["tensor"]["parameter"] == "discriminator.weight"
    assert facts["changed"]["by_step"] and facts["changed"]["line"]["line"] == 22
    assert facts["saved"]["line"]["line"] == 19
    assert [(r["rule"], r["line"]) for r in report["findings"]] == [("LF002", 25)]


def test_a_change_before_the_save_is_not_taken_for_the_culprit():
    """Target networks loaded with `load_state_dict` in `__init__` copy into weights of the
    failing one's shape and version: the change that broke the backward came after the
    forward saved it (the critic's step), not before."""
    folder = CORPUS / "lf002_multi_agent_critic_step_before_actor_backward"
    code, report = diagnose(folder, "python", "before.py")
    assert code == 1
    facts = report["facts"]
    assert facts["tensor"]["parameter"] == "self.critic.net.2.weight"
    assert facts["changed"]["by_step"] and facts["changed"]["line"]["line"] == 55


def test_an_in_place_change_of_a_saved_output_points_at_the_change():
    folder = CORPUS / "lf008_residual_add_after_relu"
    code, report = diagnose(folder, "python", "before.py")
    assert code == 1
    facts = report["facts"]
    assert facts["tensor"]["output_of"].startswith("Relu")
    assert facts["changed"]["line"]["line"] == 21 and not facts["changed"]["by_step"]
    (row,) = report["findings"]
    assert (row["rule"], row["fix"]) == fix_of(folder / "before.py", 21)


def test_the_scheduler_warning_is_a_diagnosis():
    folder = CORPUS / "lf005_warmup_lambda_before_step"
    code, report = diagnose(folder, "python", "before.py")
    assert code == 1 and "scheduler stepped before its optimizer" in report["summary"]
    assert [r["rule"] for r in report["findings"]] == ["LF005"]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        # state kept under a name chosen at run time (getattr / setattr)
        ("registry", {"kind": "freed graph", "variable": "state", "line": 18}),
        # the optimizers come from a factory in another package
        ("factory", {"kind": "version", "parameter": "netD.2.weight", "line": 17}),
        # a fused in-place helper in a library-looking module
        ("vendor", {"kind": "version", "path": "fancy/act.py", "line": 3}),
    ],
)
def test_what_the_static_rules_cannot_see_is_named_from_the_run(case, expected):
    folder = DATA / case
    assert analyse_source(SourceFile.read(folder / "train.py")).findings == []
    code, report = diagnose(folder, "python", "train.py")
    assert code == 1 and report["findings"] == [] and "no loopfix rule" in report["note"]
    facts = report["facts"]
    assert facts["kind"] == expected["kind"]
    if "variable" in expected:
        assert facts["variable"]["name"] == expected["variable"]
        assert facts["variable"]["read_at"]["line"] == expected["line"]
    if "parameter" in expected:
        assert facts["tensor"]["parameter"] == expected["parameter"]
        assert facts["changed"]["by_step"] and facts["changed"]["line"]["line"] == expected["line"]
    if "path" in expected:
        changed = facts["changed"]["line"]
        assert changed["path"].endswith(expected["path"]) and changed["line"] == expected["line"]


ARGUMENTS = """\
import argparse

import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, required=True)
parser.add_argument("--hidden", type=int, required=True)
args = parser.parse_args()
torch.manual_seed(0)
rnn = nn.GRU(3, args.hidden)
optimizer = torch.optim.SGD(rnn.parameters(), lr=0.1)
h = None
for epoch in range(args.epochs):
    out, h = rnn(torch.randn(4, 2, 3), h)
    loss = out.pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_command_with_arguments_runs_as_given(tmp_path):
    (tmp_path / "train.py").write_text(ARGUMENTS)
    code, report = diagnose(tmp_path, "python", "train.py", "--epochs", "3", "--hidden", "5")
    assert code == 1 and report["facts"]["variable"]["name"] == "h"
    assert [r["rule"] for r in report["findings"]] == ["LF001"]


def test_a_command_that_fails_for_another_reason_exits_2_with_its_own_error(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nraise ValueError('no such config: big')\n")
    code, report = diagnose(tmp_path, "python", "train.py")
    assert code == 2 and report["status"] == "failed"
    assert report["error"] == "ValueError: no such config: big"


def test_a_run_without_error_or_finding_exits_0():
    code, report = diagnose(CORPUS / "lf002_ok_actor_critic_detached_value", "python", "before.py")
    assert code == 0 and report["status"] == "clean" and report["findings"] == []


PADDED_EMBEDDING = """\
import torch
import torch.nn as nn

embedding = nn.Embedding(10, 4, padding_idx=0)  # zeroes row 0 through a view under no_grad
head = nn.Linear(4, 1)
optimizer = torch.optim.SGD([*embedding.parameters(), *head.parameters()], lr=0.1)
for _ in range(3):
    optimizer.zero_grad()
    head(embedding(torch.tensor([[1, 2, 0]]))).sum().backward()
    optimizer.step()
"""


def test_an_embedding_with_padding_runs_as_it_does_without_loopfix(tmp_path):
    """`nn.Embedding(padding_idx=0)` fills a view made under `torch.no_grad()` in place;
    reading that view's `grad_fn` raises, so the instrumentation must not make it fail."""
    (tmp_path / "train.py").write_text(PADDED_EMBEDDING)
    code, report = diagnose(tmp_path, "python", "train.py")
    assert code == 0 and report["status"] == "clean", report


def test_a_silent_bug_in_the_code_that_ran_is_reported():
    code, report = diagnose(CORPUS / "lf009_gan_retain_graph_band_aid", "python", "before.py")
    assert code == 1 and [r["rule"] for r in report["findings"]] == ["LF009"]


PIDS = """\
import os
import torch

with open("pids.txt", "w") as stream:
    stream.write(f"{os.getpid()}\\n")
"""


def test_user_code_runs_only_in_the_child(tmp_path):
    (tmp_path / "train.py").write_text(PIDS)
    code, report = diagnose(tmp_path, "python", "train.py")
    assert code == 0
    pid = int((tmp_path / "pids.txt").read_text())
    assert pid == report["run_pid"] and pid != report["loopfix_pid"]


@pytest.mark.parametrize(
    "command",
    [
        ["torchrun", "--nproc_per_node", "2", "train.py"],
        ["python", "-m", "torch.distributed.run", "train.py"],
    ],
)
def test_multi_process_launches_are_detected_and_declined(tmp_path, command):
    code, report = diagnose(tmp_path, *command)
    assert code == 2 and "multi-process" in report["summary"]


SPAWNS = """\
import torch.multiprocessing as mp


def work(rank):
    pass


if __name__ == "__main__":
    mp.spawn(work, nprocs=2)
"""


def test_a_script_that_spawns_processes_is_declined(tmp_path):
    (tmp_path / "train.py").write_text(SPAWNS)
    code, report = diagnose(tmp_path, "python", "train.py")
    assert code == 2 and "multi-process" in report["summary"]


def test_a_command_that_is_not_python_is_declined(tmp_path):
    code, report = diagnose(tmp_path, "bash", "train.sh")
    assert code == 2 and "not a python command" in report["summary"]


def test_the_text_output_reads_as_a_diagnosis():
    folder = CORPUS / "lf002_gan_discriminator_to_device"
    done = subprocess.run(
        [sys.executable, "-m", "loopfix", "diagnose", "--python", sys.executable, "--no-verify"]
        + ["--", "python", "before.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=300,
    )
    assert done.returncode == 1
    text = done.stdout
    assert "modified by an inplace operation" in text and "`discriminator.weight`" in text
    assert "an optimizer step changed it in place at before.py:22" in text
    assert "before.py:25:5: LF002 [*]" in text and "fix: " in text


# one positive corpus case for each rule the tests above do not run (LF001, LF002, LF005,
# LF008 and LF009 are there): `diagnose` names the rule at `check`'s lines with the same fix
# (every positive case: `python bench/diagnose_corpus.py`, figures in the README)
ONE_PER_RULE = [
    "lf003_multitask_heads_shared_encoder",
    "lf004_needless_retain_plain_loop",
    "lf006_losses_list_append",
    "lf007_zero_grad_between_backward_and_step",
]


@pytest.mark.parametrize("name", ONE_PER_RULE)
def test_diagnose_names_the_case_rule_with_the_check_fix(name):
    folder = CORPUS / name
    result = analyse_source(SourceFile.read(folder / "before.py"))
    expected = {
        (f.rule, result.source.position(f.start)[0], f.fix.title if f.fix else None)
        for f in result.findings
    }
    code, report = diagnose(folder, "python", "before.py")
    assert code == 1, report["summary"]
    named = {(r["rule"], r["line"], r["fix"]) for r in report["findings"]}
    assert expected <= named, (expected, named)


SOCKETS = """\
import socket

import torch

try:
    socket.create_connection(("192.0.2.1", 80), timeout=2)
    reached = "reached"
except OSError as error:
    reached = f"refused: {error}"
with open("network.txt", "w") as stream:
    stream.write(reached)
"""


def test_the_command_runs_without_network(tmp_path):
    (tmp_path / "train.py").write_text(SOCKETS)
    code, report = diagnose(tmp_path, "python", "train.py")
    assert code == 0 and report["sandbox"] in ("network namespace", "socket guard")
    assert (tmp_path / "network.txt").read_text().startswith("refused")


PRINTS = """\
import os, sys, time
import torch

print("epoch 1 loss 0.25")
print("a note on stderr", file=sys.stderr)
waited = 0
while not os.path.exists("go") and waited < 200:  # until the test has seen the first line
    time.sleep(0.1)
    waited += 1
print("done", flush=True)
"""


def _diagnose_command(*flags: str) -> list[str]:
    arguments = [sys.executable, "-m", "loopfix", "diagnose", "--python", sys.executable]
    return [*arguments, "--no-verify", *flags, "--", "python", "train.py"]


def test_the_command_s_own_output_is_shown_as_it_runs(tmp_path):
    (tmp_path / "train.py").write_text(PRINTS)
    process = subprocess.Popen(
        _diagnose_command(),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first = process.stdout.readline()
        running = process.poll() is None
    finally:
        (tmp_path / "go").write_text("")
    stdout, stderr = process.communicate(timeout=300)
    assert first == "| epoch 1 loss 0.25\n" and running  # streamed, not printed at the end
    assert process.returncode == 0
    lines = stdout.splitlines()
    assert lines[:3] == ["| done", "", f"loopfix diagnose: {lines[2].split(': ', 1)[1]}"]
    assert "| a note on stderr" in stderr.splitlines()


def test_quiet_hides_the_command_s_output(tmp_path):
    (tmp_path / "train.py").write_text(PRINTS)
    (tmp_path / "go").write_text("")
    done = subprocess.run(
        _diagnose_command("--quiet"), cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0 and done.stdout.startswith("loopfix diagnose: ")
    assert "epoch 1" not in done.stdout + done.stderr and "a note" not in done.stderr


def test_with_json_the_command_s_output_goes_to_stderr(tmp_path):
    (tmp_path / "train.py").write_text(PRINTS)
    (tmp_path / "go").write_text("")
    done = subprocess.run(
        _diagnose_command("--format", "json"),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert json.loads(done.stdout)["status"] == "clean"
    assert {"| epoch 1 loss 0.25", "| a note on stderr", "| done"} <= set(done.stderr.splitlines())


def test_a_diagnosis_with_another_interpreter_leaves_no_tracer_folder(tmp_path):
    (tmp_path / "train.py").write_text(PRINTS)
    (tmp_path / "go").write_text("")
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    python = tmp_path / "python"  # not loopfix's own path: the tracer folder is used
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    command = _diagnose_command()
    command[command.index("--python") + 1] = str(python)
    done = subprocess.run(
        command,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TMPDIR": str(temporary)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert list(temporary.glob("loopfix-tracer-*")) == []
