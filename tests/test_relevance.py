"""Which files are analysed: the text tests that run before anything is parsed."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from loopfix import relevance
from loopfix.config import Config
from loopfix.project import Project
from loopfix.scan import NO_BACKWARD, ScanSettings, analyse_path

MODEL = """\
import torch
import torch.nn as nn


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, residual):
        out = torch.sigmoid(self.fc(x))
        {change}
        return out
"""

METRIC = """

def evaluate(model, loader):
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += (model(x) - y).pow(2).sum().item()
    return total
"""


def dedent(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


@pytest.mark.parametrize(
    "change", ["out += residual", "out.add_(residual)", "out[:, 0] = 0", "out = out.relu_()"]
)
def test_a_model_whose_forward_changes_a_tensor_in_place_is_analysed(change):
    assert relevance.changes_in_place(MODEL.format(change=change))


def test_constructors_and_metrics_beside_the_models_are_no_in_place_change():
    # `super().__init__()` ends in `_(`, and `total +=` is in a module-level function that no
    # class calls: neither makes the file a model that changes something in place
    assert not relevance.changes_in_place(MODEL.format(change="out = out + residual") + METRIC)


def test_a_module_level_helper_called_from_a_class_counts_and_so_does_its_callee():
    text = MODEL.format(change="out = mix(out, residual)") + dedent(
        """

        def mix(out, residual):
            return blend(out, residual)


        def blend(out, residual):
            out += residual
            return out
        """
    )
    assert relevance.changes_in_place(text)
    assert not relevance.changes_in_place(text.replace("return blend(", "return sum(("))


def test_an_in_place_activation_built_in_the_constructor_counts():
    built = "self.fc = nn.Linear(4, 4)\n        self.act = nn.ReLU(inplace=True)"
    text = MODEL.format(change="out = self.act(out)").replace("self.fc = nn.Linear(4, 4)", built)
    assert relevance.changes_in_place(text)


def test_a_triple_quoted_string_does_not_end_the_block_it_is_in():
    text = MODEL.format(change='note = """\nat column zero\n"""\n        out += residual')
    assert relevance.changes_in_place(text)


def test_blocks_follow_indentation_and_nesting():
    lines = dedent(
        """
        class A:
            def f(self):
                def inner():
                    pass
                return 1

        def g():
            pass
        """
    ).split("\n")
    found = [(b.kind, b.name, b.start, b.end, b.parent) for b in relevance.blocks(lines)]
    assert found == [
        ("class", "A", 0, 6, None),
        ("def", "f", 1, 6, 0),
        ("def", "inner", 2, 4, 1),
        ("def", "g", 6, len(lines), None),
    ]


@pytest.mark.parametrize(
    "line",
    [
        "loss.backward()",
        "loss.backward (retain_graph=True)",
        "scaler.scale(loss).backward()",
        "accelerator.backward(loss)",
        "self.manual_backward(loss)",
        "backward_step(loss, optimizer)",  # a helper named after what it does
        "step = functools.partial(loss.backward, retain_graph=True)",
        "grads = torch.autograd.grad(loss, params)",
    ],
)
def test_every_way_of_writing_a_backward_pass_is_a_mention(line):
    assert relevance.mentions_autograd(f"import torch\n\n{line}\n")


@pytest.mark.parametrize(
    "line",
    [
        "# kept backward compatible with version 1",
        '"""Avoids fragmentation during backwards (see #12)."""',
        "def load(state, backward_hooks: dict):",
        "self._backward_sync_control = None",
        'HOOKS = ("on_before_backward", "on_after_backward")',
    ],
)
def test_the_word_in_prose_or_in_a_name_is_no_backward_pass(line):
    assert not relevance.mentions_autograd(f"import torch\n\n{line}\n")


def test_autograd_names_are_what_says_backward_and_what_names_it():
    text = dedent(
        """
        def update_params(optim, loss):
            optim.zero_grad()
            loss.backward()
            optim.step()


        class Agent:
            def learn(self, loss):
                update_params(self.optim, loss)


        class Greedy(Agent):
            pass


        def soft_update(target, source, tau):
            for t, s in zip(target.parameters(), source.parameters()):
                t.data.copy_(tau * s.data + (1 - tau) * t.data)
        """
    )
    assert relevance.autograd_names(text) == {"update_params", "Agent", "Greedy"}


def test_a_custom_autograd_function_does_autograd_work_only_when_it_runs_a_backward():
    """Its `def backward(ctx, grad)` is the gradient formula autograd calls."""
    formula = dedent(
        """
        class GradMultiply(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale):
                ctx.scale = scale
                return x.new(x)

            @staticmethod
            def backward(ctx, grad):
                return grad * ctx.scale, None
        """
    )
    assert relevance.autograd_names(formula) == set()
    checkpoint = formula.replace(
        "return grad * ctx.scale, None", "torch.autograd.backward(ctx.outputs, grad)"
    )
    assert relevance.autograd_names(checkpoint) == {"GradMultiply"}


def project(tmp_path: Path, files: dict[str, str]) -> Project:
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(dedent(text))
    return Project(tmp_path)


HELPERS = """
import torch


def update_params(optim, loss):
    optim.zero_grad()
    loss.backward()
    optim.step()


def soft_update(target, source, tau):
    pass

__version__ = "1.0"
"""


@pytest.mark.parametrize(
    "imports, analysed",
    [
        ("from utils import update_params", True),
        ("from utils import soft_update", False),  # imported from it, but it does no backward
        ("from utils import __version__", False),
        ("import utils", True),  # the whole module: any of it may be used
        ("from utils import *", True),
        ("from pkg import update_params", True),  # re-exported by a package's __init__.py
        ("from pkg import helpers", True),  # a submodule
        ("import json", False),
    ],
)
def test_a_file_without_a_backward_is_analysed_for_what_it_imports(tmp_path, imports, analysed):
    files = {
        "utils.py": HELPERS,
        "pkg/__init__.py": "from .helpers import update_params, soft_update\n",
        "pkg/helpers.py": HELPERS,
        "agent.py": f"{imports}\n\n\ndef learn(optim, loss):\n    pass\n",
    }
    assert project(tmp_path, files).imports_autograd(tmp_path / "agent.py") is analysed


FACTORIES = """
from .drgan import DRGAN
from .plain import Record


def create_model(kind):
    model = DRGAN()
    model.initialize(kind)
    return model


def build_model():
    return DRGAN()


def make_record():
    return Record()


def describe(kind):
    model = DRGAN()
    return str(kind)
"""

DRGAN = """
class DRGAN:
    def optimize(self, loss):
        loss.backward()
"""


@pytest.mark.parametrize(
    "imports, analysed",
    [
        ("from models.loader import create_model", True),  # sets up and returns a DRGAN
        ("from models.loader import build_model", True),  # returns one
        ("from models.loader import make_record", False),  # its object does no autograd work
        ("from models.loader import describe", False),  # builds one and returns something else
    ],
)
def test_a_factory_handing_back_an_object_that_does_autograd_work_counts(
    tmp_path, imports, analysed
):
    """`model = create_model(opt)` of a loader module that builds a class of a third module
    whose methods run a backward pass: the training script calls them on what it gets."""
    files = {
        "models/__init__.py": "",
        "models/loader.py": FACTORIES,
        "models/drgan.py": DRGAN,
        "models/plain.py": "class Record:\n    pass\n",
        "train.py": f"{imports}\n\nmodel = None\n",
    }
    assert project(tmp_path, files).imports_autograd(tmp_path / "train.py") is analysed


def test_returned_calls_are_what_a_function_builds_and_returns():
    assert relevance.returned_calls(dedent(FACTORIES)) == {
        "create_model": {"DRGAN"},
        "build_model": {"DRGAN"},
        "make_record": {"Record"},
        "describe": {"str"},  # a class only if the module imports one by that name
    }


def test_a_folder_inserted_first_is_searched_before_the_scripts_own(tmp_path):
    """`sys.path.insert(0, 'lib')`: `lib/models.py` is the `models` Python imports, not the
    `models.py` beside the script; `append` leaves the one beside it first."""
    files = {
        "models.py": "def update(loss):\n    pass\n",
        "lib/models.py": "def update(loss):\n    loss.backward()\n",
        "train.py": "import sys\nsys.path.insert(0, 'lib')\nfrom models import update\n",
    }
    assert project(tmp_path, files).imports_autograd(tmp_path / "train.py")
    (tmp_path / "train.py").write_text(
        "import sys\nsys.path.append('lib')\nfrom models import update\n"
    )
    assert not Project(tmp_path).imports_autograd(tmp_path / "train.py")


@pytest.mark.parametrize(
    "line, analysed",
    [
        ("sys.path.append('model')", True),
        ('sys.path.insert(0, "model")', True),
        ("sys.path.append(os.path.join(os.path.dirname(__file__), 'model'))", True),
        (
            "sys.path.insert(0, os.path.join(os.path.dirname(os.path.realpath(__file__)), 'model')"
            ")",
            True,
        ),
        ("sys.path.append('/opt/model')", False),  # not a folder of the project
        ("sys.path.append('elsewhere')", False),  # no such module there
        ("", False),  # the folder is not on the import path
    ],
)
def test_folders_a_script_adds_to_sys_path_are_searched(tmp_path, line, analysed):
    """DR-GAN's `train.py`: `sys.path.append('model')`, then `from model_loader import
    CreateModel`."""
    files = {
        "model/model_loader.py": FACTORIES.replace("from .", "from "),
        "model/drgan.py": DRGAN,
        "model/plain.py": "class Record:\n    pass\n",
        "train.py": f"import sys\n{line}\nfrom model_loader import create_model\n",
    }
    assert project(tmp_path, files).imports_autograd(tmp_path / "train.py") is analysed


MASKING = """
def mask_probs(probs, mask=None):
    if mask is not None:
        probs[mask] = 0.0
    return probs


def scaled(probs, k):
    return probs * k
"""


@pytest.mark.parametrize(
    "imports, analysed",
    [
        ("from masking import mask_probs", True),
        ("from masking import scaled", False),  # changes nothing in place
        ("import json", False),
    ],
)
def test_a_model_importing_a_helper_that_changes_in_place_is_analysed(tmp_path, imports, analysed):
    """A model module that changes nothing in place itself may still change a saved tensor
    through a function it imports from the project (`from utils import mask_probs`)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "masking.py").write_text(MASKING)
    model = f"import torch.nn as nn\n{imports}\n\n\nclass Net(nn.Module):\n"
    model += "    def forward(self, x):\n        return x\n"
    (tmp_path / "model.py").write_text(model)
    report = analyse_path(tmp_path / "model.py", ScanSettings(Config(), None))
    assert (report.skipped is None) is analysed


def test_a_skipped_file_is_reported_as_having_no_backward_pass(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "models.py").write_text(MODEL.format(change="out = out + residual") + METRIC)
    settings = ScanSettings(Config(), None)
    report = analyse_path(tmp_path / "models.py", settings)
    assert report.skipped == NO_BACKWARD
    (tmp_path / "gate.py").write_text(MODEL.format(change="out += residual"))
    report = analyse_path(tmp_path / "gate.py", settings)
    assert report.skipped is None and [f["rule"] for f in report.findings] == ["LF008"]


def test_a_skip_is_cached_until_a_module_it_imports_from_starts_doing_autograd_work(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "utils.py").write_text(HELPERS.replace("loss.backward()", "pass"))
    agent = dedent(
        """
        from utils import update_params


        def learn(critic_optim, actor_optim, critic_loss, actor_loss):
            update_params(actor_optim, actor_loss)
            update_params(critic_optim, critic_loss)
        """
    )
    (tmp_path / "agent.py").write_text(agent)
    settings = ScanSettings(Config(), str(tmp_path / ".loopfix_cache"))
    first = analyse_path(tmp_path / "agent.py", settings)
    assert first.skipped == NO_BACKWARD and not first.cached
    assert list(first.dependencies) == [str((tmp_path / "utils.py").resolve())]
    again = analyse_path(tmp_path / "agent.py", settings)
    assert again.skipped == NO_BACKWARD and again.cached
    (tmp_path / "utils.py").write_text(dedent(HELPERS))  # now it says backward
    changed = analyse_path(tmp_path / "agent.py", settings)
    assert changed.skipped is None and not changed.cached


def test_a_notebook_is_read_as_its_code_cells(tmp_path):
    (tmp_path / ".git").mkdir()
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    notebook = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    notebook["cells"].append({**cell, "source": MODEL.format(change="out += residual")})
    (tmp_path / "gate.ipynb").write_text(json.dumps(notebook))
    report = analyse_path(tmp_path / "gate.ipynb", ScanSettings(Config(), None))
    assert report.skipped is None and [f["rule"] for f in report.findings] == ["LF008"]
