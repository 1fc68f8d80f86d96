"""What analysis costs, bounded by counting work instead of timing it (the machines that run
the tests are shared): statements the loop model interprets, summaries computed, and loop
models built while planning fixes. Wall-clock figures are `bench/`'s."""

from __future__ import annotations

import gc
from collections import Counter
from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.model.loop_model import build_model
from loopfix.options import Options
from loopfix.parse import parse
from loopfix.project import Project
from loopfix.source import SourceFile

from corpus_cases import ALL_CASES, Case

HEADER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 4)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        h = self.fc1(x)
        h = F.relu(h)
        h = self.drop(h)
        return self.fc2(h)


def features(model, x):
    h = model.fc1(x)
    return torch.tanh(h)


def compute_loss(model, x, y):
    out = model(x)
    loss = F.cross_entropy(out, y)
    return loss
"""

TRAIN = """

def train_{k}(model, loader, optimizer, epochs=2):
    model.train()
    total = 0.0
    for epoch in range(epochs):
        for x, y in loader:
            optimizer.zero_grad()
            loss = compute_loss(model, x, y)
            extra = features(model, x).mean()
            (loss + 0.1 * extra).backward()
            optimizer.step()
            total += loss.item()
    return total
"""

RECURRENT = """

def train_rnn_{k}(rnn, head, loader, optimizer):
    h = torch.zeros(1, 2, 6)
    for x, y in loader:
        optimizer.zero_grad()
        out, h = rnn(x, h)
        loss = F.mse_loss(head(out), y)
        loss.backward()
        optimizer.step()
"""

MAIN = """

if __name__ == "__main__":
    model, rnn, head = Net(), nn.GRU(3, 6), nn.Linear(6, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    loader = [(torch.randn(5, 8), torch.randint(0, 4, (5,))) for _ in range(3)]
{calls}
"""


def training_module(functions: int, template: str = TRAIN) -> str:
    """A module of `functions` training functions, each calling the two helpers and the
    model's forward, and a main block that calls each of them."""
    name = "train_rnn" if template is RECURRENT else "train"
    arguments = (
        "rnn, head, loader, optimizer" if template is RECURRENT else "model, loader, optimizer"
    )
    calls = "\n".join(f"    {name}_{k}({arguments})" for k in range(functions))
    body = "".join(template.format(k=k) for k in range(functions))
    return HEADER + body + MAIN.format(calls=calls)


def lines(text: str) -> int:
    return text.count("\n")


def test_the_model_interprets_a_bounded_number_of_statements_per_line():
    text = training_module(32)
    model = build_model(parse(text))
    # each training function (13 lines) runs its two nested loops to their fixed point; its
    # helpers and the model's forward are summarised, not run again at every call
    assert model.statements_run <= 5 * lines(text)


@pytest.mark.parametrize("functions", [8, 16])
def test_the_interpreted_statements_grow_linearly_with_the_code(functions):
    once = build_model(parse(training_module(functions))).statements_run
    twice = build_model(parse(training_module(2 * functions))).statements_run
    assert twice <= 2.1 * once


@pytest.mark.parametrize("functions", [1, 4, 16])
def test_helpers_called_from_every_training_function_are_summarised_once_per_context(
    functions,
):
    counts = build_model(parse(training_module(functions))).summary_counts()
    for helper in ("features", "compute_loss"):
        computed, applied = counts[helper]
        assert computed <= 2  # the contexts: the first round of the loop, and the later ones
        assert applied >= 2 * functions


@pytest.mark.parametrize("functions", [1, 2, 4, 8])
def test_planning_builds_one_model_for_all_of_the_files_fixes(functions):
    """The file's fixes are proven together, on one analysis of the text with all of them
    (`test_planning.py`): two models however many findings the file has."""
    text = training_module(functions, RECURRENT)
    source = SourceFile.from_text(Path("train.py"), text)
    result = analyse_source(source, project=None)
    assert [f.rule for f in result.findings] == ["LF001"] * functions
    assert all(f.applied for f in result.findings)
    assert result.models_built == 2


def test_check_and_apply_do_not_plan_the_editors_further_fixes():
    """LF001's second fix (the reset beside the detach) is a code action in an editor; each
    costs an analysis of the patched file, so only the editor asks for it."""
    source = SourceFile.from_text(Path("train.py"), training_module(1, RECURRENT))
    plain = analyse_source(source, project=None)
    editor = analyse_source(source, options=Options(alternatives=True), project=None)
    assert plain.findings[0].alternatives == ()
    assert [f.title for f in editor.findings[0].alternatives] == [
        "Reset `h` at the start of each batch"
    ]
    assert plain.fixed_text == editor.fixed_text
    assert plain.models_built < editor.models_built


FRAMEWORK_MAIN = """\
import torch
import torch.nn as nn

from trainer import train


def level_0(registry):
    for name in range(4):
        for option in range(4):
            if name != option:
                level_1(registry)
                registry.append((name, option))


def level_1(registry):
    for name in range(4):
        for option in range(4):
            if name != option:
                level_2(registry)
                registry.append((name, option))


def level_2(registry):
    for name in range(4):
        for option in range(4):
            if name != option:
                level_3(registry)
                registry.append((name, option))


def level_3(registry):
    for name in range(4):
        for option in range(4):
            if name != option:
                level_4(registry)
                registry.append((name, option))


def level_4(registry):
    for name in range(4):
        for option in range(4):
            if name != option:
                level_5(registry)
                registry.append((name, option))


def level_5(registry):
    for name in range(4):
        for option in range(4):
            if name != option:
                registry.append((name, option))


def main():
    registry = []
    for config in range(3):
        for seed in range(3):
            level_0(registry)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, optimizer)


main()
"""

TRAINER = """\
import torch


def train(model, optimizer):
    for _ in range(3):
        optimizer.zero_grad()
        loss = model(torch.randn(2, 4)).sum()
        loss.backward()
        optimizer.step()
"""


def test_the_modules_calling_into_a_file_run_within_a_budget(tmp_path, monkeypatch):
    """An entry script that builds a whole framework before it calls the file (here, a
    registry filled by loops calling loops, for each configuration) costs the file's
    analysis at most `CALLERS_BUDGET` statements."""
    from loopfix.model import loop_model, memo
    from loopfix.project import Project

    # the loops calling loops would be run once each (`memo`): the budget is what is tested
    monkeypatch.setattr(memo, "ENABLED", False)
    (tmp_path / "main.py").write_text(FRAMEWORK_MAIN)
    trainer = tmp_path / "trainer.py"
    trainer.write_text(TRAINER)

    def statements() -> int:
        resolver = Project(tmp_path).resolver_for(trainer)
        return build_model(parse(TRAINER), resolver=resolver).statements_run

    alone = build_model(parse(TRAINER)).statements_run
    monkeypatch.setattr(loop_model, "CALLERS_BUDGET", 10**9)
    unbounded = statements()
    monkeypatch.setattr(loop_model, "CALLERS_BUDGET", 500)
    assert unbounded > alone + 1000  # the caller's setup is what costs
    assert statements() <= alone + 500


ENTRY = """\
import torch
import torch.nn as nn

import plots
from trainer import train


def main():
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train(model, optimizer)
"""

REPORT = """\

def report(history):
    for epoch, values in enumerate(history):
        for value in values:
            plots.point(epoch, value)
    plots.show()
"""


def test_a_caller_runs_only_the_scopes_that_name_what_reaches_the_file(tmp_path):
    """A scope of a module calling into a file runs, for what it passes, only when it names
    a function, class or module of the file or of another module calling into it: a report
    of the entry script that only plots (through a module that never imports the file)
    costs the file's analysis nothing."""
    (tmp_path / "plots.py").write_text("def point(x, y):\n    pass\n\n\ndef show():\n    pass\n")
    trainer = tmp_path / "trainer.py"
    trainer.write_text(TRAINER)

    def statements(entry: str) -> int:
        (tmp_path / "main.py").write_text(entry)
        resolver = Project(tmp_path).resolver_for(trainer)
        return build_model(parse(TRAINER), resolver=resolver).statements_run

    alone = build_model(parse(TRAINER)).statements_run
    with_main = statements(ENTRY)
    assert with_main > alone  # main() runs: it builds what `train` is given
    assert statements(ENTRY + REPORT) == with_main


PROFILED_SEARCH = """\
import torch


def beam_search(model, tokens, steps):
    with torch.autograd.profiler.record_function("beam search"):
        for _ in range(steps):
            scores = model(tokens)
            tokens = torch.cat([tokens, scores.argmax(-1, keepdim=True)], dim=1)
    return tokens
"""


def test_a_scope_that_only_profiles_with_torch_autograd_is_not_interpreted():
    """`torch.autograd.profiler`, `set_detect_anomaly` and `Variable` say `autograd` but run
    no backward pass: a beam search that profiles itself is not interpreted (fairseq's
    `sequence_generator.py` was, with every function it calls)."""
    assert build_model(parse(PROFILED_SEARCH)).statements_run == 0


@pytest.mark.parametrize(
    "imported, call",
    [
        ("from torch.autograd import grad as torch_grad", "torch_grad(loss, [x])"),
        ("import torch.autograd", "torch.autograd.grad(loss, [x])"),
        ("from torch import autograd", "autograd.backward([loss])"),
    ],
)
def test_a_scope_that_calls_torch_autograd_under_any_name_is_interpreted(imported, call):
    text = f"import torch\n{imported}\n\n\ndef penalty(net, x):\n    loss = net(x).sum()\n"
    text += f"    return {call}\n"
    assert build_model(parse(text)).statements_run > 0


GRAD_MULTIPLY = """\
import torch


class GradMultiply(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale):
        ctx.scale = scale
        return x.new(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.scale, None
"""

ENCODER = """\
import torch.nn as nn


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 4, 3)
        self.feature_grad_mult = 0.1

    def forward(self, x):
        features = self.conv(x)
        return GradMultiply.apply(features, self.feature_grad_mult)

    def output_lengths(self, lengths):
        for _ in range(3):
            lengths = (lengths - 3) // 2 + 1
        return lengths
"""


def test_a_custom_autograd_function_is_no_backward_pass(tmp_path):
    """The `backward(ctx, grad)` of a `torch.autograd.Function` is the gradient formula
    autograd calls, not a backward pass: a model whose forward applies one (fairseq's
    `GradMultiply`, in wav2vec2 and its kin) is not interpreted whole, whether the function
    is defined beside it or imported."""
    beside = GRAD_MULTIPLY + "\n\n" + ENCODER
    assert build_model(parse(beside)).statements_run == 0
    (tmp_path / "grad_multiply.py").write_text(GRAD_MULTIPLY)
    imported = "from grad_multiply import GradMultiply\n" + ENCODER
    encoder = tmp_path / "encoder.py"
    encoder.write_text(imported)
    resolver = Project(tmp_path).resolver_for(encoder)
    assert build_model(parse(imported), resolver=resolver).statements_run == 0


def test_a_custom_autograd_function_that_runs_a_backward_pass_counts():
    """A checkpointing function's `backward` runs `torch.autograd.backward` itself."""
    recomputing = GRAD_MULTIPLY.replace(
        "        return grad * ctx.scale, None",
        "        torch.autograd.backward(ctx.outputs, grad)\n        return grad, None",
    )
    assert build_model(parse(recomputing + "\n\n" + ENCODER)).statements_run > 0


def _one_case_per_kind() -> list[Case]:
    """The first corpus case of each rule, kind (fixed, unsafe, without fix, negative) and
    shape (one file, or a project whose modules import each other)."""
    firsts: dict[tuple, Case] = {}
    for case in ALL_CASES:
        kind = (case.positive, case.fixable, case.unsafe, bool(case.entry))
        for rule in case.rules or ("",):
            firsts.setdefault((rule, *kind), case)
    return sorted(set(firsts.values()), key=lambda c: c.name)


def _cyclic_garbage(action) -> Counter:
    """The objects `action()` leaves in reference cycles, by type."""
    gc.collect()
    gc.disable()
    try:
        action()
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        return Counter(type(o).__qualname__ for o in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.mark.parametrize("case", _one_case_per_kind(), ids=str)
def test_an_analysis_leaves_no_reference_cycles_behind(case):
    """A scan freezes what outlives each file's analysis out of the collector's sight
    (`scan._between_files`); that is sound only while an analysis leaves no cyclic garbage,
    which reference counting alone cannot free (a nested function that calls itself, an
    exception kept with its traceback)."""
    source = SourceFile.read(case.checked)
    garbage = _cyclic_garbage(lambda: analyse_source(source, options=Options(unsafe_fixes=True)))
    assert not garbage, garbage.most_common(8)


# a project whose modules import each other (`models` <-> `layers`), and a `main.py` that
# calls into the trainer with an agent of its own class: the analysed file's symbols, the
# callers' and the imported modules' all refer to one another
CYCLIC_PROJECT = {
    "layers.py": """\
import torch.nn as nn
from models import Net


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x)


def build():
    return Net(Head())
""",
    "models.py": """\
import torch.nn as nn
from layers import Head


class Net(nn.Module):
    def __init__(self, head=None):
        super().__init__()
        self.fc = nn.Linear(8, 4)
        self.head = head or Head()

    def forward(self, x):
        return self.head(self.fc(x))
""",
    "trainer.py": """\
import torch
from layers import build


class Trainer:
    def __init__(self, agent):
        self.agent = agent
        self.net = build()
        self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)

    def fit(self, x):
        loss = self.net(x).sum() + self.agent.penalty()
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
""",
    "main.py": """\
import torch
from trainer import Trainer
from models import Net


class Agent:
    def __init__(self):
        self.net = Net()

    def penalty(self):
        return self.net(torch.randn(2, 8)).pow(2).mean()


Trainer(Agent()).fit(torch.randn(2, 8))
""",
}


def test_a_project_analysis_and_dropping_its_modules_leave_no_reference_cycles(
    tmp_path, monkeypatch
):
    """A scan frees what it drops without the cyclic collector (`scan._between_files`):
    the symbols built for one analysis (the callers', linked to the analysed file's) and
    those of the project modules dropped once too many are kept, whose modules import each
    other, are emptied (`Symbols.forget`)."""
    import loopfix.project as project_module

    for name, text in CYCLIC_PROJECT.items():
        (tmp_path / name).write_text(text)
    project = Project(tmp_path)
    monkeypatch.setitem(project_module._PROJECTS, tmp_path, project)
    trainer = SourceFile.read(tmp_path / "trainer.py")

    def analyse():
        result = analyse_source(trainer, options=Options(unsafe_fixes=True), project=project)
        assert result.dependencies and not result.errors
        assert len(project.modules) >= 3  # models, layers, main: kept for the next file

    assert not _cyclic_garbage(analyse)
    monkeypatch.setattr(project_module, "MAX_KEPT_MODULES", 1)
    dropped = _cyclic_garbage(project_module.trim_projects)
    assert not project.modules and not dropped, dropped.most_common(8)


EVALUATED_EVERY_EPOCH = """\
import torch
import torch.nn as nn


def inference_mode():
    def decorate(fn):
        return torch.inference_mode()(fn)

    return decorate


@inference_mode()
def evaluate(model, batches):
    correct, seen = 0, 0
    for x, y in batches:
        for row, label in zip(model(x), y):
            correct += int(row.argmax() == label)
            seen += 1
        {extra}
    return correct / max(seen, 1)


def train(model, batches, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(epochs):
        for x, y in batches:
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(epoch, evaluate(model, batches))
    return evaluate(model, batches)


def main():
    batches = [(torch.randn(4, 8), torch.randint(0, 3, (4,))) for _ in range(2)]
    for trial in range(3):
        train(nn.Linear(8, 3), batches, 2)


if __name__ == "__main__":
    main()
"""


def test_an_evaluation_without_grad_that_stores_nothing_is_not_run_at_each_call(monkeypatch):
    """`evaluate` runs under a project decorator that applies `torch.inference_mode`, does no
    autograd work and stores nothing outside its locals: its calls leave nothing a rule asks
    about, and its body (with its loops) is not interpreted at each call site and loop round
    of the callers. One that stores into its argument (`model.last = seen`) still runs (its
    loop would be run once per entry state without `memo`, which is not what is tested)."""
    from loopfix.model import memo

    monkeypatch.setattr(memo, "ENABLED", False)
    inert = build_model(parse(EVALUATED_EVERY_EPOCH.format(extra="pass")))
    storing = build_model(parse(EVALUATED_EVERY_EPOCH.format(extra="model.last = seen")))
    assert inert.statements_run * 2 < storing.statements_run
    for model in (inert, storing):
        assert len(model.backwards()) == 1


WRAPPER = """\
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

LinearNoBias = partial(nn.Linear, bias=False)


class Wrapper(nn.Module):
    def __init__(self, looped=True):
        super().__init__()
        self.net = nn.Linear(4, 3)
        self.gate = LinearNoBias(3, 3) if looped else None
        self.loss_fn = F.cross_entropy if looped else F.nll_loss

    def forward(self, x, y):
{filler}
        h = self.net(x)
{calls}
        return F.cross_entropy(h, y)


model = Wrapper()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in [(torch.randn(2, 4), torch.tensor([0, 1]))] * 3:
    optimizer.zero_grad()
    model(x, y).backward()
    optimizer.step()
"""


def test_a_forward_calling_callables_it_holds_runs_once():
    """`self.gate(h)` (a module `partial(nn.Linear, ...)` made) and `self.loss_fn(h, y)` (a
    function) are attributes, not the module itself: the forward does not run again inside
    itself for them (x-transformers' wrappers ran theirs once per such call)."""
    filler = "\n".join(f"        x = x * {k}" for k in range(40))

    def statements(calls: str) -> int:
        text = WRAPPER.format(filler=filler, calls=calls)
        return build_model(parse(text)).statements_run

    plain = statements("        h = h + 1")
    holding = statements("        h = self.gate(h)\n        h = h + self.loss_fn(h, y)")
    assert holding <= plain + 5


CYCLE = """\
import torch


def encode(x, depth):
{filler}
    return refine(x, depth - 1) if depth else x


def refine(x, depth):
    return encode(x, depth - 1) if depth else x


model = torch.nn.Linear(4, 4)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for batch in [torch.randn(2, 4)] * 3:
    optimizer.zero_grad()
    encode(model(batch), 4).sum().backward()
    optimizer.step()
"""


def test_functions_calling_each_other_run_once_each():
    """Recursion through another function stops at the first return to a running function
    (only a function calling itself directly runs once more): each statement of `encode` is
    interpreted once, not once per trip round the cycle."""

    def statements(filler_lines: int) -> int:
        filler = "\n".join(f"    x = x * {k}" for k in range(filler_lines))
        return build_model(parse(CYCLE.format(filler=filler))).statements_run

    assert statements(40) - statements(10) <= 33
