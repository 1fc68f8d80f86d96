"""The loop model sees the project: imports resolved to the project's own modules, across
layouts, re-exports, cycles and broken modules, with a cache that knows its dependencies."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from scripts import run_python
from typer.testing import CliRunner

from loopfix.analysis import analyse_source
from loopfix.cli import app
from loopfix.project import Project, find_root
from loopfix.source import SourceFile

MODELS = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class WordLM(nn.Module):
        def __init__(self, vocab=20, hidden=8):
            super().__init__()
            self.embed = nn.Embedding(vocab, hidden)
            self.rnn = nn.LSTM(hidden, hidden)
            self.out = nn.Linear(hidden, vocab)

        def forward(self, tokens, state):
            seq, state = self.rnn(self.embed(tokens), state)
            return self.out(seq), state


    class Gen(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 4)

        def forward(self, z):
            return self.l(z)


    class Disc(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(4, 1)

        def forward(self, x):
            return self.l(x)
""")

TRAIN_LM = textwrap.dedent("""
    import torch
    from torch import nn
    {import_line}

    model = {constructor}()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    state = (torch.zeros(1, 3, 8), torch.zeros(1, 3, 8))
    for step in range(4):
        tokens = torch.randint(0, 20, (5, 3))
        logits, state = model(tokens, state)
        loss = logits.pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
""")

TRAIN_GAN = textwrap.dedent("""
    import torch
    {import_line}

    netG, netD = Gen(), Disc()
    opt_g = torch.optim.Adam(netG.parameters())
    opt_d = torch.optim.Adam(netD.parameters())
    for step in range(3):
        fake = netG(torch.randn(8, 4))
        d_out = netD(fake).mean()
        opt_d.zero_grad()
        d_out.backward(retain_graph=True)
        opt_d.step()
        opt_g.zero_grad()
        (-d_out).backward()
        opt_g.step()
""")

UTILS = textwrap.dedent("""
    def repackage_hidden(h):
        if isinstance(h, tuple):
            return tuple(repackage_hidden(v) for v in h)
        return h.detach()
""")


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def analyse(path: Path):
    return analyse_source(SourceFile.read(path))


def lm_fix_of(result) -> list[str]:
    return [line.strip() for line in result.fixed_text.splitlines() if "detach" in line]


def test_a_script_imports_the_module_beside_it(tmp_path):
    write(tmp_path, {"models.py": MODELS})
    write(tmp_path, {"train.py": TRAIN_LM.format(import_line="from models import WordLM",
                                                 constructor="WordLM")})  # fmt: skip
    result = analyse(tmp_path / "train.py")
    assert [(f.rule, f.fixable) for f in result.findings] == [("LF001", True)]
    # the state's structure is known from models.py: an (h, c) tuple
    assert lm_fix_of(result) == ["state = tuple(s.detach() for s in state)"]
    # models.py, and the package Python would take first once written (`models/`)
    models = str((tmp_path / "models.py").resolve())
    assert result.dependencies == {
        models: result.dependencies[models],
        str(tmp_path / "models" / "__init__.py"): None,
    }


def test_a_src_layout_package_from_a_script_folder(tmp_path):
    write(tmp_path, {"pyproject.toml": "[project]\nname = 'demo'\n"})
    write(tmp_path, {"src/demo/__init__.py": "", "src/demo/models.py": MODELS})
    write(tmp_path, {"scripts/train.py": TRAIN_LM.format(
        import_line="from demo.models import WordLM", constructor="WordLM")})  # fmt: skip
    assert find_root(tmp_path / "scripts" / "train.py") == tmp_path.resolve()
    result = analyse(tmp_path / "scripts" / "train.py")
    assert lm_fix_of(result) == ["state = tuple(s.detach() for s in state)"]


def test_relative_imports_inside_a_package(tmp_path):
    write(tmp_path, {"setup.py": "", "gan/__init__.py": "", "gan/nets.py": MODELS})
    write(tmp_path, {"gan/train.py": TRAIN_GAN.format(import_line="from .nets import Gen, Disc")})
    result = analyse(tmp_path / "gan" / "train.py")
    assert [(f.rule, f.fixable) for f in result.findings] == [("LF002", True)]
    assert "(-d_out).backward(inputs=list(netG.parameters()))" in result.fixed_text


def test_re_exports_through_init_and_module_imports(tmp_path):
    write(tmp_path, {".git/HEAD": "", "lib/__init__.py": "from .models import *\n"})
    write(tmp_path, {"lib/models.py": MODELS})
    write(tmp_path, {"train.py": TRAIN_GAN.format(import_line="from lib import Gen, Disc")})
    write(tmp_path, {"train_lm.py": TRAIN_LM.format(import_line="import lib.models as m",
                                                    constructor="m.WordLM")})  # fmt: skip
    gan = analyse(tmp_path / "train.py")
    assert [(f.rule, f.fixable) for f in gan.findings] == [("LF002", True)]
    lm = analyse(tmp_path / "train_lm.py")
    assert lm_fix_of(lm) == ["state = tuple(s.detach() for s in state)"]


def test_a_detach_helper_imported_from_utils_is_followed(tmp_path):
    write(tmp_path, {"models.py": MODELS, "utils.py": UTILS})
    loop = TRAIN_LM.format(import_line="from models import WordLM", constructor="WordLM")
    cut = "    state = {}(state)\n    logits, state"
    by_name = loop.replace("    logits, state", cut.format("repackage_hidden"))
    by_module = loop.replace("    logits, state", cut.format("utils.repackage_hidden"))
    imports = "from torch import nn\n{}"
    write(tmp_path, {"train.py": by_name.replace("from torch import nn", imports.format(
        "from utils import repackage_hidden"))})  # fmt: skip
    write(tmp_path, {"train2.py": by_module.replace("from torch import nn", imports.format(
        "import utils"))})  # fmt: skip
    assert analyse(tmp_path / "train.py").findings == []
    assert analyse(tmp_path / "train2.py").findings == []


def test_an_import_cycle_terminates(tmp_path):
    write(tmp_path, {"a.py": "from b import Disc\n" + textwrap.dedent(MODELS)})
    write(tmp_path, {"b.py": "from a import Gen\n" + textwrap.dedent(MODELS).replace("Gen", "G2")})
    write(tmp_path, {"train.py": TRAIN_GAN.format(import_line="from a import Gen, Disc")})
    result = analyse(tmp_path / "train.py")
    assert [(f.rule, f.fixable) for f in result.findings] == [("LF002", True)]


def test_a_module_that_does_not_parse_is_named_once_and_importers_are_checked(tmp_path):
    write(tmp_path, {"models.py": "class Gen(:\n", "utils.py": UTILS})
    for name in ("train.py", "train_again.py"):
        write(tmp_path, {name: TRAIN_GAN.format(import_line="from models import Gen, Disc")})
    result = CliRunner().invoke(app, ["check", "--no-cache", "--jobs", "1", str(tmp_path)])
    lines = result.stderr.splitlines()
    broken = [line for line in lines if "models.py:1" in line and "syntax error" in line]
    assert len(broken) == 1, lines
    # models.py has no backward pass: walked in a folder it is not parsed (nothing to
    # check), so its syntax error, met through its importers, is their warning
    assert broken[0].startswith("loopfix: warning:") and broken[0].endswith("(imported)")
    assert result.exit_code == 0  # nothing is claimed without the models
    # named on its own, a file is always parsed: its syntax error is the run's error
    alone = CliRunner().invoke(app, ["check", "--no-cache", str(tmp_path / "models.py")])
    assert alone.exit_code == 2 and "models.py:1:11: syntax error" in alone.stderr
    # a file with a backward pass that does not parse is an error, as ever
    write(tmp_path, {"broken_train.py": "loss.backward(\n"})
    result = CliRunner().invoke(app, ["check", "--no-cache", "--jobs", "1", str(tmp_path)])
    assert result.exit_code == 2 and "error: " in result.stderr
    # the importers were still analysed: models unknown, so nothing is claimed about them
    assert "train.py" not in result.stdout and "Traceback" not in result.output


def test_a_broken_module_imported_from_outside_the_paths_asked_for_is_a_warning(tmp_path):
    """As Ruff: only the files asked for are errors. A module they import that does not parse
    is named in a warning, and the importer is checked without it."""
    write(tmp_path, {"models.py": "class Gen(:\n", "utils.py": UTILS})
    write(tmp_path, {"train.py": TRAIN_GAN.format(import_line="from models import Gen, Disc")})
    result = CliRunner().invoke(app, ["check", "--no-cache", str(tmp_path / "train.py")])
    warnings = [line for line in result.stderr.splitlines() if "models.py:1" in line]
    assert len(warnings) == 1 and warnings[0].startswith("loopfix: warning:"), result.stderr
    assert "error" not in result.stderr.replace("syntax error", "")
    assert result.exit_code == 0, result.output


def test_editing_a_dependency_invalidates_the_cached_report(tmp_path, monkeypatch):
    write(tmp_path, {"pyproject.toml": "", "models.py": MODELS})
    write(tmp_path, {"train.py": TRAIN_LM.format(import_line="from models import WordLM",
                                                 constructor="WordLM")})  # fmt: skip
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def rules() -> list[str]:
        result = runner.invoke(app, ["check", "--format", "json", "train.py"])
        return [row["rule"] for row in json.loads(result.stdout)]

    assert rules() == ["LF001"]
    assert rules() == ["LF001"]  # from the cache
    # the model now detaches the state it returns: the loop is correct
    models = (tmp_path / "models.py").read_text()
    detached = "return self.out(seq), tuple(s.detach() for s in state)"
    (tmp_path / "models.py").write_text(models.replace("return self.out(seq), state", detached))
    assert rules() == []


STEPPING_HELPER = """\
import torch.nn.functional as F


def train_step(model, opt, x, y):
    loss = F.mse_loss(model(x), y)
    loss.backward()
    opt.step()
"""
CALLING_SCRIPT = """\
import torch
import torch.nn as nn

from {package}helpers import train_step

model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]
for x, y in data:
    train_step(model, opt, x, y)
"""


@pytest.mark.parametrize("package", ["", "."], ids=["absolute import", "relative import"])
def test_writing_a_module_a_cached_file_imports_invalidates_its_report(
    tmp_path, monkeypatch, package
):
    """A script importing a module not written yet is checked (and cached) without it; once
    the module is written (its `train_step` steps without clearing), the next check, with
    the cache warm, analyses the script again and finds what a cold check finds."""
    folder = tmp_path / "pkg" if package else tmp_path
    write(tmp_path, {"pyproject.toml": ""})
    if package:
        write(folder, {"__init__.py": ""})
    write(folder, {"train.py": CALLING_SCRIPT.format(package=package)})
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def rules(*options: str) -> list[str]:
        result = runner.invoke(app, ["check", "--format", "json", *options, "."])
        return [row["rule"] for row in json.loads(result.stdout)]

    assert rules() == []
    write(folder, {"helpers.py": STEPPING_HELPER})
    assert rules() == rules("--no-cache") == ["LF007"]


AGENT = """\
import torch.nn as nn


class Agent(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, x):
        return self.l(x)

    def update(self, loss):
        return loss.detach()
"""
AGENT_SCRIPT = """\
import torch
from reexport import Agent

agent = Agent()
opt = torch.optim.SGD(agent.parameters(), lr=0.1)
for step in range({steps}):
    loss = agent(torch.randn(2, 4)).sum()
    agent.update(loss)
    loss.backward()
    opt.step()
    opt.zero_grad()
"""


def test_editing_a_module_reached_through_another_invalidates_every_report(tmp_path, monkeypatch):
    """Two scripts import `Agent` through `reexport.py`, which imports it from `agent.py`.
    The second script's analysis finds both modules parsed already, for the first one; its
    report still depends on `agent.py`, so once `Agent.update` runs a backward of its own,
    a warm check finds in both scripts what a cold check finds."""
    write(
        tmp_path,
        {"pyproject.toml": "", "agent.py": AGENT, "reexport.py": "from agent import Agent\n"},
    )
    write(tmp_path, {f"train_{n}.py": AGENT_SCRIPT.format(steps=n + 2) for n in range(2)})
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def findings(*options: str) -> list[tuple[str, str]]:
        result = runner.invoke(app, ["check", "--format", "json", *options, "."])
        return [(Path(row["path"]).name, row["rule"]) for row in json.loads(result.stdout)]

    assert findings() == []
    agent = (tmp_path / "agent.py").read_text()
    (tmp_path / "agent.py").write_text(agent.replace("return loss.detach()", "loss.backward()"))
    assert (
        findings() == findings("--no-cache") == [("train_0.py", "LF003"), ("train_1.py", "LF003")]
    )


def test_a_kept_module_linked_to_a_module_parsed_again_is_parsed_again(tmp_path):
    """A long-lived process (the language server): `train.py` reaches `Gen` through
    `nets.py` -> `reexport.py` -> `models.py`. Once `models.py` renames its networks,
    another file's analysis parses `reexport.py` again first; `nets.py`, unchanged, still
    links to the `reexport.py` parsed before, so it is parsed again too, and `train.py` sees
    neither network (what a cold analysis sees: no finding)."""
    write(tmp_path, {"pyproject.toml": "", "models.py": MODELS})
    write(tmp_path, {"reexport.py": "from models import Gen, Disc\n"})
    write(tmp_path, {"nets.py": "from reexport import Gen, Disc\n"})
    write(tmp_path, {"direct.py": "from reexport import Gen\n\nnet = Gen()\n"})
    write(tmp_path, {"train.py": TRAIN_GAN.format(import_line="from nets import Gen, Disc")})
    project = Project(tmp_path.resolve())

    def rules(name: str) -> list[str]:
        project.next_epoch()  # what the language server does before each analysis
        result = analyse_source(SourceFile.read(tmp_path / name), project=project)
        return [finding.rule for finding in result.findings]

    assert rules("train.py") == ["LF002"]
    models = (tmp_path / "models.py").read_text()
    renamed = models.replace("class Gen(", "class Generator(")
    (tmp_path / "models.py").write_text(renamed.replace("class Disc(", "class Discriminator("))
    rules("direct.py")
    assert rules("train.py") == []


def test_imports_outside_the_project_stay_opaque(tmp_path):
    project = Project(tmp_path)
    assert project.find(tmp_path / "train.py", "torch.nn", 0) is None
    assert project.find(tmp_path / "train.py", "os", 0) is None
    # an installed package's own imports, relative ones included, are not the project's
    installed = tmp_path / "venv" / "site-packages" / "lib"
    write(installed, {"__init__.py": "", "nets.py": "", "train.py": ""})
    assert project.find((installed / "train.py").resolve(), "nets", 1) is None
    assert project.find((installed / "train.py").resolve(), "nets", 0) is None


@pytest.mark.parametrize("level, module", [(1, "models"), (2, "models")])
def test_relative_imports_climb_packages(tmp_path, level, module):
    write(tmp_path, {"pkg/__init__.py": "", "pkg/models.py": "", "pkg/sub/__init__.py": ""})
    write(tmp_path, {"pkg/sub/models.py": ""})
    importer = (tmp_path / "pkg" / "sub" / "train.py").resolve()
    found = Project(tmp_path.resolve()).find(importer, module, level)
    expected = "pkg/sub/models.py" if level == 1 else "pkg/models.py"
    assert found == (tmp_path / expected).resolve()


def test_the_loop_model_reads_no_file_itself(tmp_path, monkeypatch):
    """Other modules' texts come only through the project's reader (the language server's
    reads open buffers): with every file read forbidden, a project served from memory still
    gives the cross-file finding."""
    gan = TRAIN_GAN.format(import_line="from models import Gen, Disc")
    texts = {(tmp_path / "models.py").resolve(): MODELS, (tmp_path / "train.py").resolve(): gan}
    for path in texts:
        path.write_text("")  # the files exist (imports resolve to them); their text is not read
    project = Project(tmp_path.resolve(), read=lambda path: texts.get(path.resolve()))

    def forbidden(*args, **kwargs):
        raise AssertionError("a file was read on the detection path")

    monkeypatch.setattr("builtins.open", forbidden)
    monkeypatch.setattr(Path, "read_bytes", forbidden)
    monkeypatch.setattr(Path, "read_text", forbidden)
    train = (tmp_path / "train.py").resolve()
    source = SourceFile.from_text(train, texts[train])
    result = analyse_source(source, project=project)
    assert [(f.rule, f.fixable) for f in result.findings] == [("LF002", True)]


BASE_TRAINER = textwrap.dedent("""
    import torch


    class BaseTrainer:
        def __init__(self, lr=1e-3):
            self.build_model()
            self.opt_g = torch.optim.Adam(self.G.parameters(), lr)
            self.opt_d = torch.optim.Adam(self.D.parameters(), lr)

        def build_model(self):
            raise NotImplementedError
""")

SOLVER = textwrap.dedent("""
    import torch
    from torch import nn

    from base import BaseTrainer


    class Solver(BaseTrainer):
        def build_model(self):
            self.G = nn.Sequential(nn.Linear(2, 6), nn.ReLU(), nn.Linear(6, 3))
            self.D = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 1))

        def train(self, iters):
            for i in range(iters):
                fake = self.G(torch.randn(5, 2))
                d_fake = self.D(fake)
                self.opt_d.zero_grad()
                d_fake.mean().backward(retain_graph=True)
                self.opt_d.step()
                self.opt_g.zero_grad()
                (-d_fake.mean()).backward()
                self.opt_g.step()


    Solver().train(3)
""")


def test_a_base_class_from_another_module_builds_the_subclass_instance(tmp_path):
    """`BaseTrainer.__init__` (base.py) calls `self.build_model()`, which the subclass in
    train.py overrides: the instance holds the subclass's networks, owned by the base's
    optimizers."""
    write(tmp_path, {"base.py": BASE_TRAINER, "train.py": SOLVER})
    result = analyse(tmp_path / "train.py")
    assert [(f.rule, f.fixable) for f in result.findings] == [("LF002", True)]
    assert "inputs=list(self.G.parameters())" in result.fixed_text


def test_each_module_is_parsed_once_however_many_files_import_it(tmp_path, monkeypatch):
    write(tmp_path, {"pyproject.toml": "", "models.py": MODELS})
    for name in ("train_a.py", "train_b.py", "train_c.py"):
        write(tmp_path, {name: TRAIN_GAN.format(import_line="from models import Gen, Disc")})
    project = Project(tmp_path.resolve())
    parsed = []
    real_parse = __import__("ast").parse

    def counting(text, filename="<unknown>", *args, **kwargs):
        parsed.append(filename)
        return real_parse(text, filename, *args, **kwargs)

    monkeypatch.setattr("loopfix.project.ast.parse", counting)
    for name in ("train_a.py", "train_b.py", "train_c.py"):
        result = analyse_source(SourceFile.read(tmp_path / name), project=project)
        assert [f.rule for f in result.findings] == ["LF002"]  # its fix re-analyses it too
    models = str((tmp_path / "models.py").resolve())
    assert parsed.count(models) == 1  # (the scripts themselves are parsed for each analysis)


def test_a_run_keeps_at_most_max_kept_modules_parsed_and_finds_the_same(tmp_path, monkeypatch):
    from loopfix import project as project_module
    from loopfix.config import Config
    from loopfix.scan import ScanSettings, scan

    write(tmp_path, {"pyproject.toml": "", "models.py": MODELS, "utils.py": UTILS})
    names = [f"train_{n}.py" for n in range(3)]
    for name in names:
        write(tmp_path, {name: TRAIN_GAN.format(import_line="from models import Gen, Disc")})
    paths = [tmp_path / name for name in names]
    monkeypatch.setattr(project_module, "_PROJECTS", {})
    kept = [r.findings for r in scan(paths, ScanSettings(Config(), None), 1)]
    assert len(project_module._PROJECTS[tmp_path.resolve()].modules) == 1  # models.py, kept
    monkeypatch.setattr(project_module, "_PROJECTS", {})
    monkeypatch.setattr(project_module, "MAX_KEPT_MODULES", 0)
    trimmed = [r.findings for r in scan(paths, ScanSettings(Config(), None), 1)]
    assert project_module._PROJECTS[tmp_path.resolve()].modules == {}  # dropped after each
    assert trimmed == kept and all(rows for rows in kept)


def test_a_trim_keeps_the_modules_used_last_with_what_they_link_to(tmp_path, monkeypatch):
    """Past `MAX_KEPT_MODULES`, the modules the latest files used stay parsed (the core every
    file of a framework imports), each with the modules it links to; the others are dropped
    and parsed again when needed, and every file finds what it finds with nothing dropped."""
    from loopfix import project as project_module
    from loopfix.config import Config
    from loopfix.scan import ScanSettings, scan

    files = {"pyproject.toml": "", "core.py": MODELS, "base.py": "from core import Gen\n"}
    names = []
    for n in range(4):
        files[f"extra_{n}.py"] = f"def helper_{n}():\n    return {n}\n"
        names.append(f"train_{n}.py")
        line = f"from base import Gen\nfrom core import Disc\nfrom extra_{n} import helper_{n}"
        files[names[-1]] = TRAIN_GAN.format(import_line=line)
    write(tmp_path, files)
    paths = [tmp_path / name for name in names]
    monkeypatch.setattr(project_module, "_PROJECTS", {})
    kept = [r.findings for r in scan(paths, ScanSettings(Config(), None), 1)]
    parsed: list[str] = []
    real_load = Project.load

    def counting_load(self, path, resolver):
        if path not in self.modules:
            parsed.append(path.name)
        return real_load(self, path, resolver)

    monkeypatch.setattr(Project, "load", counting_load)
    monkeypatch.setattr(project_module, "_PROJECTS", {})
    monkeypatch.setattr(project_module, "MAX_KEPT_MODULES", 4)
    trimmed = [r.findings for r in scan(paths, ScanSettings(Config(), None), 1)]
    assert trimmed == kept and all(rows for rows in kept)
    # core.py and base.py (which links to it) parsed once; each extra module once
    assert sorted(parsed) == sorted(["core.py", "base.py", *(f"extra_{n}.py" for n in range(4))])
    modules = project_module._PROJECTS[tmp_path.resolve()].modules
    assert {path.name for path in modules} >= {"core.py", "base.py"}
    assert len(modules) <= 4
    assert all(link in modules for module in modules.values() for link in module.links)


def test_an_editor_keystroke_finds_a_module_created_since(tmp_path):
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "models.py").write_text("class Net: pass\n")
    script = tmp_path / "train.py"
    script.write_text("from models import Net\nfrom helpers import step\n")
    project = Project(tmp_path.resolve())
    assert project.importers_of(tmp_path / "models.py") == {script.resolve()}
    assert project.find(script, "helpers", 0) is None
    (tmp_path / "helpers.py").write_text("def step(): pass\n")
    project.imports_changed(script)  # a keystroke that leaves the import lines as they were
    assert project.find(script, "helpers", 0) == (tmp_path / "helpers.py").resolve()
    assert project.importers_of(tmp_path / "helpers.py") == {script.resolve()}
    assert project.importers_of(tmp_path / "models.py") == {script.resolve()}


@pytest.mark.parametrize(
    "layout, module, found",
    [
        ({"utils.py": ""}, "utils", "utils.py"),
        ({"pkg/__init__.py": "", "pkg/models.py": ""}, "pkg.models", "pkg/models.py"),
        ({"pkg/__init__.py": ""}, "pkg", "pkg/__init__.py"),
        ({"pkg/notes.txt": ""}, "pkg", None),  # a folder without __init__.py
        ({"weird.py/__init__.py": ""}, "weird", None),  # a folder named like a module file
        ({"src/lib/core.py": ""}, "lib.core", "src/lib/core.py"),  # a src/ layout
        ({"other.py": ""}, "missing", None),
    ],
)
def test_an_import_is_found_as_python_finds_it(tmp_path, layout, module, found):
    """Folders are listed once and only the names they list are looked at on disk."""
    (tmp_path / "pyproject.toml").write_text("")
    for name, text in layout.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    script = tmp_path / "train.py"
    script.write_text(f"import {module}\n")
    project = Project(tmp_path.resolve())
    expected = (tmp_path / found).resolve() if found else None
    assert project.find(script.resolve(), module, 0) == expected


@pytest.mark.parametrize(
    "links, module, found",
    [
        ({"pkg": "real_pkg"}, "pkg.models", "real_pkg/models.py"),  # a linked package folder
        ({"utils.py": "lib/impl.py"}, "utils", "lib/impl.py"),  # a linked module file
        ({"utils.py": "lib/missing.py"}, "utils", None),  # a broken link
        ({"utils.py": "lib"}, "utils", None),  # a link to a folder is no module file
    ],
)
def test_a_module_reached_through_a_link_is_found_at_its_real_path(tmp_path, links, module, found):
    """As `Path.resolve` says it, which the reverse index of importers uses too."""
    (tmp_path / "pyproject.toml").write_text("")
    for name in ("real_pkg/__init__.py", "real_pkg/models.py", "lib/impl.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("")
    for link, target in links.items():
        (tmp_path / link).symlink_to(tmp_path / target)
    script = tmp_path / "train.py"
    script.write_text(f"import {module}\n")
    project = Project(tmp_path)
    expected = (tmp_path / found).resolve() if found else None
    assert project.find(script.resolve(), module, 0) == expected
    if expected is not None:
        assert project.importers_of(expected) == {script.resolve()}


def test_what_a_module_imports_through_a_cycle_does_not_depend_on_which_file_came_first(
    tmp_path,
):
    # `other.py` reaches `nets` first, `nets` imports `util` and `util` imports back from
    # `nets` while `nets` is still being read; `train.py` then imports the networks that
    # `util` re-exports. The GAN's finding is the same after `other.py` as alone.
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/nets.py": "from pkg.util import scale\n" + textwrap.dedent(MODELS),
        "pkg/util.py": "from pkg.nets import Gen, Disc\n\n\ndef scale(x):\n    return x\n",
        "other.py": "import torch\nfrom pkg.nets import Gen\n\n"
                    "Gen()(torch.randn(2, 4)).sum().backward()\n",
        "train.py": TRAIN_GAN.format(import_line="from pkg.util import Gen, Disc"),
    })  # fmt: skip
    after = CliRunner().invoke(
        app, ["check", "--no-cache", "--jobs", "1", str(tmp_path / "other.py"),
              str(tmp_path / "train.py")],
    )  # fmt: skip
    alone = CliRunner().invoke(app, ["check", "--no-cache", str(tmp_path / "train.py")])
    assert "LF002" in alone.output
    assert after.output == alone.output


def test_a_package_without_root_markers_imports_from_the_folder_holding_it(tmp_path):
    """A copy of a repository without `.git` or `pyproject.toml`: `pkg/train.py` imports
    `pkg.models` as Python does when run from the folder holding `pkg`, so the GAN's
    networks are followed and its step before the generator's backward is found."""
    write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/models.py": MODELS,
        "pkg/train.py": TRAIN_GAN.format(import_line="from pkg.models import Gen, Disc"),
    })  # fmt: skip
    assert find_root(tmp_path / "pkg" / "train.py") == tmp_path.resolve()
    assert find_root(tmp_path / "pkg" / "models.py") == tmp_path.resolve()
    result = analyse(tmp_path / "pkg" / "train.py")
    assert [f.rule for f in result.findings] == ["LF002"]


def namespace_gan(root: Path, script: str | None) -> Path:
    """`gan/` without `__init__.py` (a namespace package, PEP 420): `gan/train.py` imports
    `gan.nets`, which Python finds only from the folder holding `gan/`; `script` is what
    `main.py` beside it says (None: no script there)."""
    write(root, {
        "gan/nets.py": MODELS,
        "gan/train.py": TRAIN_GAN.format(import_line="from gan.nets import Gen, Disc"),
    })  # fmt: skip
    if script is not None:
        write(root, {"main.py": script})
    return root / "gan" / "train.py"


def test_a_namespace_package_imports_from_the_folder_of_the_script_that_imports_it(tmp_path):
    """A repository without root markers whose `main.py` imports `gan.train` through a
    folder without `__init__.py` (TextGAN-PyTorch's `instructor/`, Super-mario A3C's
    `src/`): `gan/train.py` runs as `gan.train`, so its `from gan.nets import ...` is
    followed, and the GAN's step before the generator's backward is found."""
    train = namespace_gan(tmp_path, "import gan.train\n")
    assert find_root(train) == tmp_path.resolve()
    assert find_root(tmp_path / "gan" / "nets.py") == tmp_path.resolve()
    assert [f.rule for f in analyse(train).findings] == ["LF002"]


@pytest.mark.parametrize(
    "script",
    [None, "import torch\n", "import gan_utils\n"],
    ids=["no script", "imports nothing of gan", "imports another module"],
)
def test_a_folder_no_script_above_imports_keeps_its_own_root(tmp_path, script):
    """Python imports `gan.nets` only when a script above `gan/` runs it as `gan.train`:
    with none, `gan/` is a folder of scripts, and nothing is invented."""
    train = namespace_gan(tmp_path, script)
    assert find_root(train) == (tmp_path / "gan").resolve()
    assert analyse(train).findings == []


def test_a_module_beside_a_folder_of_its_name_shadows_the_namespace_package(tmp_path):
    """`gan.py` beside `gan/`: `import gan.train` imports the module `gan.py`, which is no
    package, and fails; `gan/` is not a namespace package of the folder above."""
    train = namespace_gan(tmp_path, "import gan.train\n")
    write(tmp_path, {"gan.py": "SCALE = 2\n"})
    assert find_root(train) == (tmp_path / "gan").resolve()


def test_a_script_written_later_moves_the_namespace_root(tmp_path):
    """The namespace root is looked for again once the folder above changes (a language
    server keeps asking while `main.py` is written)."""
    train = namespace_gan(tmp_path, None)
    assert find_root(train) == (tmp_path / "gan").resolve()
    write(tmp_path, {"main.py": "from gan import train\n"})
    assert find_root(train) == tmp_path.resolve()


LAMBDA_MODULE = """\
import torch


class VQ(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = torch.nn.Linear(4, 4)
        self.dec = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.dec(self.enc(x))

    def calculate_lambda(self, perceptual_loss, gan_loss):
        w = self.dec.weight
        g1 = torch.autograd.grad(perceptual_loss, w, {keep})[0]
        g2 = torch.autograd.grad(gan_loss, w, retain_graph=True)[0]
        own = self.dec(torch.randn(2, 4)).pow(2).sum()
        g3 = torch.autograd.grad(own, w, retain_graph=True)[0]
        lam = (torch.norm(g1) + torch.norm(g3)) / (torch.norm(g2) + 1e-4)
        return 0.8 * torch.clamp(lam, 0, 1e4).detach()
"""

VQGAN_TRAINER = """\
import torch
from lam import VQ


class TrainVQGAN:
    def __init__(self):
        self.vqgan = VQ()
        self.disc = torch.nn.Linear(4, 1)
        self.opt_vq = torch.optim.Adam(self.vqgan.parameters(), 1e-3)
        self.train()

    def train(self):
        for i in range(3):
            x = torch.randn(8, 4)
            out = self.vqgan(x)
            rec = (out - x).abs().mean()
            g_loss = -self.disc(out).mean()
            lam = self.vqgan.calculate_lambda(rec, g_loss)
            vq_loss = rec + lam * g_loss
            self.opt_vq.zero_grad()
            vq_loss.backward()
            self.opt_vq.step()


torch.manual_seed(0)
TrainVQGAN()
print("ok")
"""


def test_a_graph_a_method_is_handed_keeps_its_retain_for_the_callers_backward(tmp_path):
    """VQGAN's `calculate_lambda(perceptual_loss, gan_loss)`: called from a trainer in
    another module, it takes each loss's gradient with `retain_graph=True`, and the trainer
    then backpropagates both losses: the retains are needed (without the first one the
    second `autograd.grad` fails, and without either the trainer's backward would). Only the
    retain on the graph the method builds itself (`own`) is needless."""
    write(tmp_path, {"lam.py": LAMBDA_MODULE.format(keep="retain_graph=True")})
    write(tmp_path, {"main.py": VQGAN_TRAINER})
    assert run_python(["main.py"], tmp_path).stdout.strip() == "ok"
    findings = analyse(tmp_path / "lam.py").findings
    text = (tmp_path / "lam.py").read_text()
    assert [(f.rule, text[: f.start].count("\n") + 1) for f in findings] == [("LF004", 18)]
    write(tmp_path, {"lam.py": LAMBDA_MODULE.format(keep="retain_graph=False")})
    failed = run_python(["main.py"], tmp_path)
    assert "backward through the graph a second time" in failed.stderr, failed.stderr
