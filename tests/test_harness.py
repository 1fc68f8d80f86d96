"""User code that misbehaves is reported as such and never takes loopfix down."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from loopfix.verify.harness import RunSettings, run_script

FAST = RunSettings(device="cpu", iterations=2, timeout=20, memory_limit=3 << 30)


@pytest.fixture(params=[True, False], ids=["warm-worker", "fresh-process"])
def warm(request) -> bool:
    return request.param


@pytest.fixture
def run(warm):
    """Run code through the warm fork server or a fresh process: both must contain it."""

    def run(code: str, tmp_path: Path, settings: RunSettings = FAST):
        settings = dataclasses.replace(settings, warm=warm)
        return run_script(code.encode(), "script.py", tmp_path, settings)

    return run


def test_a_hanging_script_is_killed_with_its_process_group(run, tmp_path):
    code = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        "while True:\n    time.sleep(1)\n"
    )
    result = run(code, tmp_path, RunSettings(device="cpu", timeout=8))
    assert result.timed_out and "timed out" in result.error


def test_sys_exit_is_an_error_not_an_exit_of_loopfix(run, tmp_path):
    result = run("import sys\nsys.exit(3)\n", tmp_path)
    assert result.error == "SystemExit: 3"


def test_a_crash_is_reported_with_its_message(run, tmp_path):
    result = run("raise ValueError('broken data')\n", tmp_path)
    assert result.error == "ValueError: broken data"


def test_exhausting_memory_is_stopped_by_the_limit(run, tmp_path):
    code = "import torch\nblocks = [torch.ones(256, 1024, 1024) for _ in range(64)]\n"
    result = run(code, tmp_path)
    assert result.error is not None and result.returncode != 0


def test_user_code_runs_in_a_temporary_copy_and_cannot_write_next_to_the_original(run, tmp_path):
    code = "open('written.txt', 'w').write('x')\nimport os\nprint(os.getcwd())\n"
    result = run(code, tmp_path)
    assert result.error is None
    assert not (tmp_path / "written.txt").exists()


def test_credential_variables_are_not_passed_on(run, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_API_TOKEN", "secret")
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    code = (
        "import os\n"
        "assert 'MY_API_TOKEN' not in os.environ\n"
        "assert os.environ['HARMLESS_SETTING'] == 'kept'\n"
    )
    assert run(code, tmp_path).error is None


def test_a_credential_the_user_lets_through_is_passed_on(run, tmp_path, monkeypatch):
    monkeypatch.setenv("MY_API_TOKEN", "secret")
    monkeypatch.setenv("OTHER_SECRET", "hidden")
    code = (
        "import os\n"
        "assert os.environ['MY_API_TOKEN'] == 'secret'\n"
        "assert 'OTHER_SECRET' not in os.environ\n"
    )
    settings = dataclasses.replace(FAST, pass_env=("MY_API_TOKEN",))
    assert run(code, tmp_path, settings).error is None


@pytest.mark.skipif(not os.path.exists("/dev/nvidia0"), reason="needs a CUDA device")
def test_auto_device_prefers_cuda(tmp_path):
    code = "import torch\nx = torch.zeros(1)\nassert x.is_cuda\n"
    result = run_script(code.encode(), "s.py", tmp_path, RunSettings(device="auto"))
    assert result.error is None and result.trace["device"] == "cuda"


def test_auto_device_on_a_cpu_machine_is_cpu(tmp_path):
    if os.path.exists("/dev/nvidia0"):
        pytest.skip("this machine has a GPU")
    result = run_script(b"x = 1\n", "s.py", tmp_path, RunSettings(device="auto"))
    assert result.trace["device"] == "cpu"


def test_the_warm_worker_survives_a_killed_run_and_serves_the_next(tmp_path):
    hang = RunSettings(device="cpu", timeout=3)
    assert run_script(b"while True: pass\n", "a.py", tmp_path, hang).timed_out
    after = run_script(b"print('fine')\n", "b.py", tmp_path, FAST)
    assert after.error is None and after.trace is not None


def test_a_run_leaves_nothing_of_the_user_code_in_the_worker(tmp_path):
    (tmp_path / "helper.py").write_text("VALUE = 1\n")
    first = b"import helper\nhelper.VALUE = 2\n"
    second = b"import helper\nassert helper.VALUE == 1, helper.VALUE\n"
    assert run_script(first, "a.py", tmp_path, FAST).error is None
    assert run_script(second, "b.py", tmp_path, FAST).error is None


TRACER = """\
import os, signal, sys, time
from loopfix.cli import _terminate
from loopfix.verify.interpreter import tracer_path

signal.signal(signal.SIGTERM, _terminate)  # as `loopfix` itself does
folder = tracer_path()
if sys.argv[1] == "fork":
    child = os.fork()
    if child == 0:
        sys.exit(0)  # a forked child's exit runs cleanup, and leaves the folder alone
    os.waitpid(child, 0)
    assert os.path.isdir(folder), "a forked child removed its parent's tracer folder"
print(folder, flush=True)
if sys.argv[1] == "wait":
    time.sleep(60)
"""


def _tracer_process(tmp_path: Path, how: str):
    import subprocess
    import sys

    env = {**os.environ, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir(exist_ok=True)
    process = subprocess.Popen(
        [sys.executable, "-c", TRACER, how], env=env, stdout=subprocess.PIPE, text=True
    )
    folder = Path(process.stdout.readline().strip())
    assert folder.parent == tmp_path / "tmp"
    assert how != "wait" or (folder / "loopfix").is_symlink()
    return process, folder


def _tracers(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "tmp").glob("loopfix-tracer-*"))


@pytest.mark.parametrize("how", ["exit", "fork"])
def test_the_tracer_folder_is_removed_when_the_process_exits(tmp_path, how):
    process, folder = _tracer_process(tmp_path, how)
    assert process.wait(timeout=60) == 0
    assert _tracers(tmp_path) == []
    assert (Path(__file__).parent.parent / "src" / "loopfix" / "__init__.py").is_file()


def test_the_tracer_folder_is_removed_when_the_process_is_terminated(tmp_path):
    import signal

    process, folder = _tracer_process(tmp_path, "wait")
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=60) == 128 + signal.SIGTERM
    assert _tracers(tmp_path) == []


def test_a_tracer_folder_left_by_a_killed_process_is_removed_by_the_next(tmp_path):
    import signal

    process, folder = _tracer_process(tmp_path, "wait")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=60)
    assert _tracers(tmp_path) == [folder]  # nothing runs after SIGKILL
    other = tmp_path / "tmp" / "loopfix-tracer-1-kept"  # a running process's (pid 1)
    other.mkdir()
    next_process, _ = _tracer_process(tmp_path, "exit")
    assert next_process.wait(timeout=60) == 0
    assert _tracers(tmp_path) == [other]


CUDA_CALLS = """\
import torch
x = torch.ones(2, 3).cuda()
model = torch.nn.Linear(3, 1).cuda()
model(x).sum().backward()
"""


@pytest.mark.skipif(os.path.exists("/dev/nvidia0"), reason="this machine has a GPU")
def test_cuda_calls_run_on_the_cpu_where_torch_has_no_cuda(run, tmp_path):
    """Code written for one GPU calls `.cuda()` unconditionally: on a machine without CUDA
    the tensor and the module stay on the CPU, and the trace says so."""
    result = run(CUDA_CALLS, tmp_path)
    assert result.error is None and result.trace["cuda_on_cpu"] is True
    assert run("import torch\nx = torch.ones(2)\n", tmp_path).trace["cuda_on_cpu"] is False
    moved = run("import torch\nx = torch.ones(2).to('cuda')\n", tmp_path)
    assert "CUDA" in moved.error  # other ways to name a GPU still raise


GAN_ON_ONE_GPU = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8)).cuda()
netD = nn.Sequential(nn.Linear(8, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1)).cuda()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4)
criterion = nn.BCEWithLogitsLoss()
ones, zeros = torch.ones(8, 1).cuda(), torch.zeros(8, 1).cuda()

for i in range(3):
    real = torch.randn(8, 8).cuda()
    fake = netG(torch.randn(8, 4).cuda())
    output = netD(fake)
    errD = criterion(netD(real), ones) + criterion(output, zeros)
    optimizerD.zero_grad()
    errD.backward(retain_graph=True)
    optimizerD.step()
    errG = criterion(output, ones)
    optimizerG.zero_grad()
    errG.backward()
    optimizerG.step()
"""


@pytest.mark.skipif(os.path.exists("/dev/nvidia0"), reason="this machine has a GPU")
def test_a_fix_of_code_written_for_one_gpu_verifies_on_the_cpu(tmp_path):
    from loopfix.analysis import analyse_source
    from loopfix.source import SourceFile
    from loopfix.verify.verifier import verify_file

    script = tmp_path / "train.py"
    script.write_text(GAN_ON_ONE_GPU)
    result = analyse_source(SourceFile.read(script), project=None)
    (verdict,) = verify_file(result, RunSettings(device="auto", iterations=3, timeout=180))
    assert (verdict.outcome, verdict.level, verdict.device) == (
        "equivalent",
        "live (.cuda() on the CPU)",
        "cpu",
    )


def test_a_module_with_relative_imports_runs_in_its_package(tmp_path):
    """A package's module that imports from its siblings relatively (`from ..settings
    import BATCH`) runs only as part of its package (`python -m pkg.agent.train`): the
    original and the patched copy run so, and the fix verifies."""
    from loopfix.analysis import analyse_source
    from loopfix.source import SourceFile
    from loopfix.verify.verifier import verify_file

    agent = tmp_path / "pkg" / "agent"
    agent.mkdir(parents=True)
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (agent / "__init__.py").write_text("")
    (tmp_path / "pkg" / "settings.py").write_text("BATCH = 8\n")
    script = agent / "train.py"
    loop = GAN_ON_ONE_GPU.replace(".cuda()", "").replace("(8, ", "(BATCH, ")
    script.write_text("from ..settings import BATCH\n" + loop)
    result = analyse_source(SourceFile.read(script), project=None)
    (verdict,) = verify_file(result, RunSettings(device="cpu", iterations=3, timeout=180))
    assert verdict.outcome == "equivalent", verdict


CLASSIFIER = """\
import torch
import torch.nn as nn

from utils import make_batches


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.1)

    def forward(self, x):
        return self.net(x)

    def train_epoch(self, n):
        for x, y in make_batches(n):
            loss = (self(x) - y).pow(2).mean()
            loss.backward()
            self.optimizer.zero_grad()
            self.optimizer.step()
"""


def test_a_package_module_imports_as_the_project_imports_it(tmp_path):
    """A method of `models/classifier.py`, run on its own, imports `utils` as the project
    does when `main.py` beside `models/` imports it: the project's `utils.py`, not the
    `models/utils/` package beside the module."""
    from loopfix.analysis import analyse_source
    from loopfix.source import SourceFile
    from loopfix.verify.verifier import verify_file

    models = tmp_path / "models"
    (models / "utils").mkdir(parents=True)
    (models / "__init__.py").write_text("")
    (models / "utils" / "__init__.py").write_text("def init_weights(module):\n    return module\n")
    (tmp_path / "utils.py").write_text(
        "import torch\n\n\ndef make_batches(n):\n"
        "    return [(torch.randn(8, 4), torch.randn(8, 1)) for _ in range(n)]\n"
    )
    (models / "classifier.py").write_text(CLASSIFIER)
    result = analyse_source(SourceFile.read(models / "classifier.py"))
    assert [f.rule for f in result.findings] == ["LF007"]
    (verdict,) = verify_file(result, RunSettings(device="cpu", iterations=3, timeout=180))
    assert verdict.outcome == "equivalent", verdict


def test_an_error_without_a_message_says_where_the_users_code_raised_it(run, tmp_path):
    """A bare `assert` in a module the script imports (a data check): the verdict names the
    file, line and statement, not only `AssertionError:`."""
    (tmp_path / "data.py").write_text(
        "import os\n\n\ndef load(path):\n    assert os.path.exists(path)\n    return path\n"
    )
    code = "import torch\nfrom data import load\n\nload('/no/such/corpus.txt')\n"
    result = run(code, tmp_path)
    assert "AssertionError" in result.error
    assert "data.py:5: assert os.path.exists(path)" in result.error


def test_an_error_with_a_message_is_said_as_raised(run, tmp_path):
    result = run("raise ValueError('bad shape')\n", tmp_path)
    assert result.error.startswith("ValueError: bad shape")
    assert "raised at" not in result.error


ARGUMENTS = """\
import argparse, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--data", required=True)
parser.add_argument("--epochs", type=int, default=40)
parser.add_argument("name")
args = parser.parse_args()
print(sys.argv[1:], args.data, args.epochs, args.name, file=sys.stderr)
if os.path.basename(args.data) != "data":
    assert args.data == "tiny corpus/" and args.epochs == 1 and args.name == "gru"
"""


def test_a_script_gets_the_command_line_the_user_gave(run, tmp_path):
    given = ("--data", "tiny corpus/", "--epochs", "1", "gru")
    result = run(ARGUMENTS, tmp_path, dataclasses.replace(FAST, script_args=given))
    assert result.error is None, result.stderr
    assert "['--data', 'tiny corpus/', '--epochs', '1', 'gru']" in result.stderr


def test_without_a_command_line_required_arguments_are_made_up(run, tmp_path):
    result = run(ARGUMENTS, tmp_path)
    assert result.error is None, result.stderr
    assert " 40 " in result.stderr  # the parser's default


def test_a_backward_is_placed_at_the_lines_of_the_users_code_only(run, tmp_path):
    """The lines a backward ran from are the script's: not those of `runpy`, which runs it,
    nor torch's (a finding on line 98 of a notebook was matched to `runpy.py`'s line 98)."""
    code = "import torch\n\nw = torch.ones(2, requires_grad=True)\n(w * 2).sum().backward()\n"
    result = run(code, tmp_path)
    assert result.error is None, result.stderr
    (event,) = [e for e in result.trace["events"] if e[0] == "backward"]
    assert list(event[9]) == [4]


WORKER_PROCESSES = """\
import torch
import torch.multiprocessing as mp
import torch.nn as nn


def train(model, optimizer, rank):
    for _ in range(2):
        optimizer.zero_grad()
        model(torch.randn(4, 3)).sum().backward()
        optimizer.step()


class Worker(mp.Process):
    def __init__(self, model, optimizer):
        super().__init__()
        self.model, self.optimizer = model, optimizer

    def run(self):
        train(self.model, self.optimizer, 1)


model = nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
workers = [mp.Process(target=train, args=(model, optimizer, 0)), Worker(model, optimizer)]
[w.start() for w in workers]
[w.join() for w in workers]
assert not any(w.is_alive() for w in workers)
loader = torch.utils.data.DataLoader(torch.arange(8.0), batch_size=4, num_workers=1)
print(sum(float(batch.sum()) for batch in loader))
"""


def test_the_users_worker_processes_run_in_the_traced_process(run, tmp_path):
    """A worker process of the user's code (a `target` or a subclass's `run()`) runs in the
    tracing process, one after the other, so its backwards and steps are recorded; a
    library's processes (a `DataLoader`'s workers) start as they would."""
    result = run(WORKER_PROCESSES, tmp_path, RunSettings(device="cpu", iterations=8, timeout=60))
    assert result.error is None, result.stderr[-2000:]
    assert result.trace["workers_here"] == 2
    assert [e[0] for e in result.trace["events"]].count("step") == 4
