"""Function and method units, run through a user's loopfix_fixtures.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.rules import rule_by_code
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings, run_script
from loopfix.verify.units import Parameter, stand_in_plan
from loopfix.verify.verifier import Runs, collect_runs, unit_of, verify_file

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


def test_without_a_fixture_a_library_function_verifies_as_a_replica(library):
    result = analyse(library)
    assert unit_of(result, result.findings[0]) == "train"  # nothing else runs it
    (verdict,) = verify_file(result, SETTINGS)
    assert (verdict.verdict, verdict.level) == ("equivalent", "replica"), verdict
    assert "Trying to backward through the graph a second time" in verdict.original


def test_a_wrong_rewrite_is_rejected_on_the_replica_too(library):
    result = analyse(library)
    runs = collect_runs(result, SETTINGS)["train"]
    wrong = result.fixed_text.replace("model(x, hidden)", "model(x, hidden + 0.5)")
    assert wrong != result.fixed_text
    patched = run_script(wrong.encode(), library.name, library.parent, SETTINGS, call="train")
    assert patched.trace["replica"] and patched.error is None
    judged = Runs(runs.original, patched, None, SETTINGS.iterations)
    verdict = rule_by_code("LF001").oracle(result.findings[0], judged)
    assert verdict.startswith("not equivalent"), verdict


def test_fixtures_are_not_looked_for_above_the_project_root(library, tmp_path):
    (tmp_path.parent / "loopfix_fixtures.py").write_text(FIXTURES)  # outside the project
    try:
        (verdict,) = verify_file(analyse(library), SETTINGS)
        assert verdict.level == "replica"  # the outside fixture was not used
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


def test_a_method_without_a_fixture_gets_a_replica_instance(tmp_path):
    path = tmp_path / "trainer.py"
    path.write_text(STATEFUL_TRAINER)
    result = analyse(path)
    assert unit_of(result, result.findings[0]) == "Trainer.fit"
    (verdict,) = verify_file(result, SETTINGS)
    assert (verdict.verdict, verdict.level) == ("equivalent", "replica"), verdict


STATEFUL_TRAINER = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, model, optimizer):
        self.model = model
        self.optimizer = optimizer
        self.model.train()

    def fit(self, loader, epochs):
        state = self.model.init_hidden(2)
        for epoch in range(epochs):
            for i, (x, y) in enumerate(loader):
                out, state = self.model(x, state)
                loss = nn.functional.mse_loss(out, y)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
"""


def test_parameters_get_roles_from_how_the_code_uses_them():
    plan = stand_in_plan(STATEFUL_TRAINER + "\nnn.LSTM\n", "Trainer.fit")
    assert plan.init == (Parameter("model", "recurrent"), Parameter("optimizer", "optimizer"))
    assert plan.arguments == (Parameter("loader", "data", unpack=2), Parameter("epochs", "number"))
    assert (plan.kind, plan.stands_in, plan.needs_data) == ("LSTM", True, True)
    assert stand_in_plan(STATEFUL_TRAINER, "Trainer.evaluate") is None


SELF_CONTAINED = """\
import torch
import torch.nn as nn


def train(loader, steps: int, *, log_every):
    lstm, head = nn.LSTM(6, 10), nn.Linear(10, 3)
    optimizer = torch.optim.Adam([*lstm.parameters(), *head.parameters()], lr=1e-3)
    state = None
    for sequences, labels in loader:
        out, state = lstm(sequences, state)
        loss = nn.functional.cross_entropy(head(out[-1]), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


def test_a_function_that_builds_its_model_gets_data_shaped_for_it(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(SELF_CONTAINED)
    plan = stand_in_plan(SELF_CONTAINED, "train")
    assert [p.role for p in plan.arguments] == ["data", "number", "number"]
    assert plan.arguments[-1].keyword and not plan.stands_in
    (verdict,) = verify_file(analyse(path), SETTINGS)
    assert (verdict.verdict, verdict.level) == ("equivalent", "live (synthetic data)"), verdict


def test_a_function_that_needs_nothing_runs_live(tmp_path):
    path = tmp_path / "train.py"
    batch = "(torch.randn(5, 2, 6), torch.tensor([0, 2]))"
    path.write_text(
        SELF_CONTAINED.replace(
            "def train(loader, steps: int, *, log_every):", "def train():"
        ).replace("    state = None\n", f"    state = None\n    loader = [{batch}] * 4\n")
    )
    (verdict,) = verify_file(analyse(path), SETTINGS)
    assert (verdict.verdict, verdict.level) == ("equivalent", "live"), verdict


def test_parsed_options_are_recognised_by_attribute_reads():
    text = "def main(args, steps):\n    for _ in range(args.epochs + steps):\n        args.lr\n"
    plan = stand_in_plan(text, "main")
    assert plan.arguments == (Parameter("args", "options"), Parameter("steps", "number"))
    assert not plan.stands_in  # the code's own models, with made-up settings


def test_an_object_whose_own_method_the_code_calls_is_not_made_up(tmp_path):
    """`replay_buffer.sample(batch_size)`: no stand-in answers the author's own method, so
    the verdict says what is missing and how to give it, before anything runs."""
    text = STATEFUL_TRAINER.replace(
        "def fit(self, loader, epochs):", "def fit(self, replay_buffer, epochs):"
    ).replace(
        "for i, (x, y) in enumerate(loader):",
        "for i in range(4):\n                x, y = replay_buffer.sample(2)",
    )
    plan = stand_in_plan(text, "Trainer.fit")
    assert plan.arguments[0] == Parameter("replay_buffer", "object", method="sample")
    path = tmp_path / "trainer.py"
    path.write_text(text)
    (verdict,) = verify_file(analyse(path), SETTINGS)
    assert verdict.verdict.startswith("unverified: nothing to call Trainer.fit with"), verdict
    assert "`replay_buffer` is an object whose method `sample` it calls" in verdict.verdict
    assert "`fixture_Trainer_fit` in loopfix_fixtures.py" in verdict.verdict


def test_made_up_options_read_flags_by_the_parts_of_their_names():
    from loopfix.verify.replica import StandInOptions

    options = StandInOptions(stand_in_plan(STATEFUL_TRAINER, "Trainer.fit"), "cpu")
    assert options.use_amp is False and options.no_cuda is False and options.gpus is False
    assert options.sample_rate == 0.01 and options.example_count == 4  # numbers, not flags


HELPER_USES_THE_OPTIMIZER = """\
import torch.multiprocessing as mp


def push_and_pull(opt, lnet, gnet, x):
    opt.zero_grad()
    lnet(x).sum().backward()
    opt.step()


class Worker(mp.Process):
    def __init__(self, gnet, opt, steps):
        super().__init__()
        self.gnet, self.opt = gnet, opt
        self.steps = steps

    def run(self):
        for step in range(self.steps):
            push_and_pull(self.opt, self.lnet, self.gnet, step)
"""


def test_a_parameter_passed_on_to_a_helper_takes_the_role_the_helper_gives_it():
    """`self.gnet, self.opt = gnet, opt` and `push_and_pull(self.opt, ...)`: the optimizer
    only the helper steps is still an optimizer (a number would make it `int.zero_grad`)."""
    plan = stand_in_plan(HELPER_USES_THE_OPTIMIZER, "Worker.run")
    assert plan.init == (
        Parameter("gnet", "number"),
        Parameter("opt", "optimizer"),
        Parameter("steps", "number"),
    )


METER_MAIN = """\
import torch
import torch.nn as nn
from metrics import AverageMeter

torch.manual_seed(0)
model = nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = AverageMeter()
for step in range(4):
    x, y = torch.randn(8, 4), torch.randint(0, 2, (8,))
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.update(loss, x.size(0))
print(losses.sum / losses.count)
"""

METER = """\
class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
{convert}        self.sum += val * n
        self.count += n
"""


@pytest.mark.parametrize(
    ("convert", "verdict"),
    [
        ("", "equivalent"),  # the meter keeps every loss's graph
        # turned into a number in a way the model does not follow: reported, not confirmed
        ('        val = val.item() if hasattr(val, "item") else val\n', "not confirmed"),
    ],
)
def test_lf006_confirms_a_meter_by_the_total_it_keeps(tmp_path, convert, verdict):
    """For `meter.update(loss, n)` the probe records the meter's total (`losses.sum`), not
    the loss handed to it: a meter that turns the value into a number is not confirmed, and
    nothing is written."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'meter'\n")
    (tmp_path / "metrics.py").write_text(METER.format(convert=convert))
    (tmp_path / "main.py").write_text(METER_MAIN)
    result = analyse(tmp_path / "main.py")
    assert [f.rule for f in result.findings] == ["LF006"]
    (found,) = verify_file(result, SETTINGS)
    assert found.verdict.startswith(verdict), found


SCRIPT_THAT_FAILS_FIRST = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def train(global_model):
    local_model = Net()
    local_model.load_state_dict(global_model.state_dict())
    optimizer = torch.optim.SGD(global_model.parameters(), lr=0.1)
    for _ in range(3):
        loss = local_model(torch.randn(4)).sum()
        optimizer.zero_grad()
        loss.backward()
        for global_param, local_param in zip(global_model.parameters(), local_model.parameters()):
            global_param._grad = local_param.grad
        optimizer.step()
        local_model.load_state_dict(global_model.state_dict())


if __name__ == "__main__":
    observation = (torch.randn(4).numpy(), {})  # gym 0.26's reset(): a tuple
    torch.from_numpy(observation)
    train(Net())
"""


def test_when_the_script_and_its_function_alone_both_fail_the_verdict_names_both(tmp_path):
    """The script fails on its own data before any backward; its function, run alone with
    made-up arguments, fails too (a made-up model has none of the keys `load_state_dict`
    wants). The verdict names the script's error first, then the function's, whole: not
    the made-up run's alone, cut at its first line."""
    path = tmp_path / "a3c.py"
    path.write_text(SCRIPT_THAT_FAILS_FIRST)
    result = analyse(path)
    assert [f.rule for f in result.findings] == ["LF007"]
    (verdict,) = verify_file(result, SETTINGS)
    assert verdict.verdict.startswith(
        "unverified: the script raised TypeError: expected np.ndarray (got tuple) before its "
        "first backward; `train`, run alone with arguments loopfix made up, raised "
        "RuntimeError: Error(s) in loading state_dict for Net: Missing key(s)"
    ), verdict.verdict
