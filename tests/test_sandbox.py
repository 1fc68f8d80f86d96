"""Verification runs a project's code: in a sandbox that holds. No network, home, caches and
temporary files inside the run's own folder, made-up command-line values there too, missing
logging and plotting packages stood in for, pretrained weights replaced by the same seeded
initialisation in both runs, and the project's own interpreter (`--python`)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile
from loopfix.verify import sandbox
from loopfix.verify.harness import RunSettings, run_script
from loopfix.verify.verifier import verify_file

SETTINGS = RunSettings(device="cpu", iterations=3, timeout=120)

PROBE = """\
import argparse
import json
import socket
import sys
import tempfile
from pathlib import Path

parser = argparse.ArgumentParser()
parser.add_argument("--out", required=True)
parser.add_argument("--epochs", type=int, required=True)
args = parser.parse_args()
results = {"epochs": args.epochs}
targets = {
    "source": Path(__file__).parent / "probe-written.txt",
    "home": Path.home() / "probe-written.txt",
    "argument": Path(args.out),
    "temporary": Path(tempfile.gettempdir()) / "probe-written.txt",
}
for name, target in targets.items():
    target.write_text("written by the probe")
    results[name] = str(target.resolve())
for name, address in [("internet", ("93.184.216.34", 80)), ("local", ("127.0.0.1", PORT))]:
    try:
        socket.create_connection(address, timeout=2).close()
        results[name] = "connected"
    except OSError as error:
        results[name] = f"refused: {error}"
print("PROBE " + json.dumps(results), file=sys.stderr)
"""


def test_a_verification_run_writes_nothing_outside_its_folder_and_reaches_no_network(
    tmp_path, monkeypatch
):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(), project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    code = PROBE.replace("PORT", str(listener.getsockname()[1])).encode()
    try:
        run = run_script(code, "probe.py", project, SETTINGS)
    finally:
        listener.close()
    line = next(x for x in run.stderr.splitlines() if x.startswith("PROBE "))
    results = json.loads(line[len("PROBE ") :])
    assert results["internet"].startswith("refused") and results["local"].startswith("refused")
    assert run.trace["sandbox"] in (sandbox.NETWORK_NAMESPACE, sandbox.SOCKET_GUARD)
    assert results["epochs"] == 1  # a required number gets a made-up value
    for name in ("source", "home", "argument", "temporary"):
        assert "loopfix-verify-" in results[name], (name, results[name])
    assert list(project.iterdir()) == [] and list(home.iterdir()) == []


def test_the_socket_guard_refuses_without_a_namespace_but_lets_local_pipes_through():
    script = textwrap.dedent("""
        import socket
        from loopfix.verify import sandbox
        sandbox._guard_sockets()
        try:
            socket.create_connection(("127.0.0.1", 9))
        except OSError as error:
            print("refused:", error)
        a, b = socket.socketpair()
        a.sendall(b"x")
        print("pipe:", b.recv(1))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "refused: [Errno" in done.stdout and "disabled during loopfix" in done.stdout
    assert "pipe: b'x'" in done.stdout


def verify_text(tmp_path, text: str, **settings) -> list:
    path = tmp_path / "train.py"
    path.write_text(text)
    result = analyse_source(SourceFile.read(path), project=None)
    assert result.changed
    return verify_file(result, RunSettings(**{**SETTINGS.__dict__, **settings}))


# A GRU carried across batches without a detach (LF001), with code around it that real
# scripts have: {head} is spliced in before the loop.
CARRIED = """\
import torch
import torch.nn as nn
{imports}
torch.manual_seed(0)
rnn = nn.GRU(4, 8)
head = nn.Linear(8, 1)
{head}
optimizer = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
series = torch.randn(40, 1, 4)
hidden = torch.zeros(1, 1, 8)
for start in range(0, 30, 10):
    out, hidden = rnn(series[start:start + 10], hidden)
    loss = head(out).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
{tail}
"""


def test_pretrained_weights_are_replaced_by_the_same_initialisation_in_both_runs(tmp_path):
    text = CARRIED.format(
        imports="import torch.hub",
        head=(
            'head.load_state_dict(torch.hub.load_state_dict_from_url("https://example.invalid/'
            'head.pth"))\ncheckpoint = torch.load("checkpoints/best.pth")\n'
            'rnn.load_state_dict(checkpoint["rnn"])'
        ),
        tail="",
    )
    (verdict,) = verify_text(tmp_path, text)
    assert verdict.verdict == "equivalent", verdict.verdict
    assert verdict.level == "live (synthetic weights)"


def test_missing_logging_and_plotting_packages_are_stood_in_for(tmp_path):
    text = CARRIED.format(
        imports="import matplotlib.pyplot as plt\nimport wandb\nfrom tqdm import tqdm, trange",
        head='wandb.init(project="demo")\nfor _ in trange(2):\n    pass',
        tail="    wandb.log({'loss': loss.item()})\nplt.plot([1, 2])\nplt.savefig('loss.png')",
    )
    text = text.replace("for start in range(0, 30, 10):", "for start in tqdm(range(0, 30, 10)):")
    (verdict,) = verify_text(tmp_path, text)
    assert verdict.verdict == "equivalent", verdict.verdict


def test_another_missing_package_is_named_in_the_verdict(tmp_path):
    text = CARRIED.format(imports="import projectdep_not_installed", head="", tail="")
    (verdict,) = verify_text(tmp_path, text)
    assert verdict.verdict == (
        "unverified: missing package projectdep_not_installed (install the project's "
        "dependencies or pass --python)"
    )


def test_a_folder_the_script_appends_to_its_import_path_is_reached_from_its_own_folder(
    tmp_path,
):
    """`sys.path.append("../lib")` is read from the working folder when the import runs;
    the run's is a temporary one, where the entry names nothing. Read from the script's own
    folder (the one place it names a folder that exists), the project's module is found."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "settings.py").write_text("SCALE = 0.5\n")
    (tmp_path / "scripts").mkdir()
    path = tmp_path / "scripts" / "train.py"
    imports = 'import sys\nsys.path.append("../lib")\nimport settings'
    text = CARRIED.format(imports=imports, head="", tail="")
    path.write_text(text.replace("lr=0.1", "lr=settings.SCALE"))
    result = analyse_source(SourceFile.read(path), project=None)
    (verdict,) = verify_file(result, SETTINGS)
    assert verdict.verdict == "equivalent", verdict.verdict


@pytest.fixture
def second_environment(tmp_path) -> Path:
    """A virtual environment of its own holding a package only the project needs; it sees
    torch through a .pth file pointing at this environment's site-packages."""
    environment = tmp_path / "project-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(environment)], check=True)
    (site,) = environment.glob("lib/python*/site-packages")
    torch_site = Path(__import__("torch").__file__).parent.parent
    (site / "torch-here.pth").write_text(str(torch_site) + "\n")
    (site / "projectdep.py").write_text("SCALE = 0.5\n")
    return environment / "bin" / "python"


def test_the_project_interpreter_runs_the_code_that_needs_its_packages(
    tmp_path, second_environment
):
    text = CARRIED.format(imports="import projectdep", head="", tail="")
    text = text.replace("lr=0.1", "lr=projectdep.SCALE")
    (own,) = verify_text(tmp_path, text)
    assert own.verdict.startswith("unverified: missing package projectdep")
    (theirs,) = verify_text(tmp_path, text, python=str(second_environment))
    assert theirs.verdict == "equivalent", theirs.verdict


def test_an_interpreter_without_torch_is_one_line(tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    text = CARRIED.format(imports="", head="", tail="")
    (verdict,) = verify_text(tmp_path, text, python=str(bare / "bin" / "python"))
    assert verdict.verdict == f"unverified: {bare / 'bin' / 'python'} has no torch " + (
        "(install the project's dependencies there)"
    )


def test_the_default_interpreter_is_the_projects_virtual_environment(tmp_path, monkeypatch):
    from loopfix.verify.interpreter import choose

    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    assert choose(None, tmp_path) == sys.executable
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    assert choose(None, tmp_path) == str(tmp_path / ".venv" / "bin" / "python")
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # loopfix's own, as in a pre-commit hook
    assert choose(None, tmp_path) == str(tmp_path / ".venv" / "bin" / "python")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / ".venv"))
    assert choose("/usr/bin/python3", tmp_path) == "/usr/bin/python3"
    assert os.path.isabs(choose("python3", None))


def test_a_project_without_tool_loopfix_still_finds_its_venv(tmp_path, monkeypatch):
    """No `[tool.loopfix]`, so no config folder: the `.venv` at the project root above the
    file (the editor's document), or above the current folder (pre-commit's hooks)."""
    from loopfix.config import Config

    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)  # loopfix's own, as in a pre-commit hook
    (tmp_path / ".git").mkdir()
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    (tmp_path / "sub").mkdir()
    expected = str(tmp_path / ".venv" / "bin" / "python")
    assert Config().interpreter(tmp_path / "sub" / "train.py") == expected
    monkeypatch.chdir(tmp_path / "sub")
    assert Config().interpreter() == expected


def test_only_literal_relative_entries_naming_a_folder_are_read_from_the_scripts_folder(
    tmp_path,
):
    from loopfix.verify.harness import added_folders

    (tmp_path / "lib").mkdir()
    text = (
        "import os, sys\n"
        'sys.path.append("../nowhere")\n'  # names no folder from the script's
        'sys.path.insert(0, "lib")\n'
        "sys.path.append(os.getcwd())\n"  # not a literal
        'sys.path.append("/opt/shared")\n'  # absolute: the same from anywhere
        'sys.path.insert("lib")\n'  # not how insert is called
    )
    lib, model, data = ((tmp_path / name).resolve() for name in ("lib", "model", "data"))
    assert added_folders(text, tmp_path) == ((lib,), ())  # before the script's folder
    assert added_folders("sys.path.append(", tmp_path) == ((), ())
    # the run's copy of the script is elsewhere: a folder joined to the script's own is
    # taken from the script's folder too
    model.mkdir()
    data.mkdir()
    joined = (
        'sys.path.append(os.path.join(os.path.dirname(__file__), "model"))\n'
        'sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))\n'
        'sys.path.insert(1, "data")\n'  # after the script's folder
        'sys.path.append(os.path.join(os.path.dirname(base), "data"))\n'  # not the script's
    )
    assert added_folders(joined, tmp_path) == ((lib,), (model, data))
