"""Fixes that look right and are not: each shape here once got a safe fix (or a verdict) it
did not deserve, found by trying to break the guarded reorder, the retain fix and the
mutual-learning detach with correct-looking code. The specification: no safe fix where the
rewrite would change what the code computes, and a safe, verified fix where it would not."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from loopfix.analysis import analyse_source
from loopfix.options import Options
from loopfix.rules.update_order import RENAME_NOTE
from loopfix.source import SourceFile
from loopfix.verify.harness import RunSettings
from loopfix.verify.verifier import verify_file

VERIFY = RunSettings(device="cpu", iterations=3, timeout=180)

# A WGAN-style loop: the generator's update under a guard reuses the critic's output after
# the critic's step (LF002). `{setup}`, `{guard}`, `{before_guard}` and `{inside}` vary.
GAN = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
netD = nn.Sequential(nn.Linear(4, 16), nn.LeakyReLU(0.2), nn.Linear(16, 1))
optD = torch.optim.Adam(netD.parameters(), lr=1e-4)
optG = torch.optim.Adam(netG.parameters(), lr=1e-4)
schedD = torch.optim.lr_scheduler.StepLR(optD, step_size=1000)
n_critic = 2
{setup}
for i in range(6):
    d_real = netD(torch.randn(16, 4))
    d_fake = netD(netG(torch.randn(16, 8)))
    optD.zero_grad()
    errD = d_fake.mean() - d_real.mean()
    errD.backward(retain_graph=True)
    optD.step()
{before_guard}
    if {guard}:{comment}
        optG.zero_grad()
        errG = -d_fake.mean()
        errG.backward()
{inside}
        optG.step()
"""


def gan(
    guard: str, setup: str = "", before_guard: str = "", inside: str = "", comment: str = ""
) -> str:
    def indented(code: str, depth: int) -> str:
        return textwrap.indent(code, " " * depth) if code else ""

    return GAN.format(
        guard=guard,
        setup=setup,
        before_guard=indented(before_guard, 4),
        inside=indented(inside, 8),
        comment=comment,
    ).replace("\n\n    if", "\n    if")


def analyse(tmp_path, text: str):
    path = tmp_path / "train.py"
    path.write_text(text)
    return analyse_source(SourceFile.read(path), project=None)


CHANGED_CONDITIONS = {
    # the scheduler's counter, stepped between the two copies of the `if`
    "scheduler counter": dict(
        guard="schedD.last_epoch % n_critic == 0", before_guard="schedD.step()"
    ),
    # the guarded body pops the list the condition tests
    "list popped inside": dict(guard="budget", setup="budget = [1, 2]", inside="budget.pop()"),
    # counters kept in a dict or on an object, incremented inside the guarded body (the
    # second copy of the `if` would see the incremented counter)
    "dict counter": dict(
        guard='counts["d"] % n_critic == 0',
        setup='counts = {"d": 0}',
        inside='counts["d"] += 1',
    ),
    "attribute counter": dict(
        guard="state.d % n_critic == 0",
        setup="class State:\n    d = 0\n\n\nstate = State()",
        inside="state.d += 1",
    ),
}

# The same counters changed before the `if` by a statement the reorder does not move across
# it: both copies of the `if` see what the original `if` saw.
UNCHANGED_CONDITIONS = {
    "dict counter": dict(
        guard='counts["d"] % n_critic == 0',
        setup='counts = {"d": 0}',
        before_guard='counts["d"] += 1',
    ),
    "attribute counter": dict(
        guard="state.d % n_critic == 0",
        setup="class State:\n    d = 0\n\n\nstate = State()",
        before_guard="state.d += 1",
    ),
}


@pytest.mark.parametrize("name", sorted(CHANGED_CONDITIONS))
def test_a_guard_whose_condition_may_change_gets_no_safe_reorder(tmp_path, name):
    result = analyse(tmp_path, gan(**CHANGED_CONDITIONS[name]))
    (finding,) = result.findings
    assert finding.fix is None or not finding.fix.safe
    assert "cannot be evaluated again" in finding.fix_unavailable


@pytest.mark.parametrize("name", sorted(UNCHANGED_CONDITIONS))
def test_a_guard_whose_condition_changes_only_before_it_gets_the_guarded_reorder(tmp_path, name):
    result = analyse(tmp_path, gan(**UNCHANGED_CONDITIONS[name]))
    (finding,) = result.findings
    assert finding.fix is not None and finding.fix.safe, finding.fix_unavailable
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.verdict == "equivalent", verdict.verdict


def test_a_step_is_never_moved_across_a_continue(tmp_path):
    text = gan("True", before_guard="if i % n_critic != 0:\n    continue")
    (finding,) = analyse(tmp_path, text).findings
    assert finding.fix is None or not finding.fix.safe
    assert "may leave the iteration early" in finding.fix_unavailable


@pytest.mark.parametrize(
    "guard, comment", [("(i + 1) % n_critic == 0", ""), ("i % n_critic == 0", "  # train G")]
)
def test_a_counter_guard_gets_the_guarded_reorder_and_it_verifies(tmp_path, guard, comment):
    """`(i + 1) % n` starts the generator in the second iteration: its first step ran on a
    critic the first iteration had stepped, which only a comparison of the first iteration's
    steps (not every optimizer's first step) judges rightly. A comment after the `if` header
    travels with each copy of the header."""
    text = gan(guard, comment=comment)
    result = analyse(tmp_path, text)
    (finding,) = result.findings
    assert finding.fix is not None and finding.fix.safe, finding.fix_unavailable
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.verdict == "equivalent", verdict.verdict


SHARED_ENCODER = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 16))
head_a, head_b = nn.Linear(16, 1), nn.Linear(16, 1)
for step in range(3):
    features = encoder(torch.randn(4, 8))
    head_a(features).pow(2).mean().backward()
{between}
    head_b(features).abs().mean().backward()
"""


@pytest.mark.parametrize(
    "between",
    [
        "for p in encoder.parameters():\n    p.data -= 0.1 * p.grad",
        "with torch.no_grad():\n    for p in encoder.parameters():\n        p -= 0.1 * p.grad",
    ],
)
def test_no_retain_fix_across_weights_changed_by_hand(tmp_path, between):
    text = SHARED_ENCODER.format(between=textwrap.indent(between, "    "))
    (finding,) = analyse(tmp_path, text).findings
    assert finding.rule == "LF003"
    assert finding.fix is None or not finding.fix.safe


def test_the_retain_fix_without_anything_between_is_safe(tmp_path):
    (finding,) = analyse(tmp_path, SHARED_ENCODER.format(between="")).findings
    assert finding.fix.safe and finding.fix.title.startswith("Keep the shared graph")


MUTUAL = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
n = 2
models = [nn.Sequential(nn.Linear(10, 16), nn.Tanh(), nn.Linear(16, 5)) for _ in range(n)]
optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in models]
for it in range(3):
    x, y = torch.randn(8, 10), torch.randint(0, 5, (8,))
    outputs = [m(x) for m in models]
    for k in range(n):
        {target}
        loss = F.cross_entropy(outputs[k], y) + F.mse_loss(outputs[k], teacher)
        optimizers[k].zero_grad()
        loss.backward(retain_graph=True)
        optimizers[k].step()
"""


def test_a_teacher_that_includes_the_peer_itself_is_not_detached(tmp_path):
    text = MUTUAL.format(target="teacher = sum(outputs[j] for j in range(n)) / n")
    (finding,) = analyse(tmp_path, text).findings
    assert finding.fix is None
    assert "may be the peer's own" in finding.fix_unavailable


@pytest.mark.parametrize(
    "target",
    [
        "teacher = outputs[1 - k]",
        "teacher = sum(outputs[j] for j in range(n) if j != k) / (n - 1)",
    ],
)
def test_a_teacher_of_the_other_peers_is_detached(tmp_path, target):
    result = analyse(tmp_path, MUTUAL.format(target=target))
    (finding,) = result.findings
    assert finding.fix is not None and finding.fix.safe
    assert ".detach()" in result.fixed_text


WARM_UP_BRANCH = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
optimizer_G = torch.optim.Adam(generator.parameters(), lr=1e-3)
warmup = 2
for i in range(5):
    optimizer_G.zero_grad()
    fake = generator(torch.randn(3, 4))
    loss_pixel = fake.pow(2).mean()
    if i < warmup:
        loss_pixel.backward()
        optimizer_G.step()
        continue
    loss_G = loss_pixel + fake.abs().mean()
    loss_G.backward()
    optimizer_G.step()
"""

TWO_MODULE_ZEROS = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
encoder, decoder = nn.Linear(4, 8), nn.Linear(8, 2)
optimizer = torch.optim.Adam([*decoder.parameters(), *encoder.parameters()], lr=1e-3)
for i in range(3):
    decoder.zero_grad()
    encoder.zero_grad()
    loss = decoder(encoder(torch.randn(3, 4))).pow(2).mean()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize("text", [WARM_UP_BRANCH, TWO_MODULE_ZEROS], ids=["warm-up", "modules"])
def test_correct_zero_grad_shapes_from_real_repositories_are_left_alone(tmp_path, text):
    """ESRGAN's warm-up branch (its own backward and step, then `continue`) is no gradient
    accumulation; an optimizer over two modules cleared by each module's zero_grad() is
    cleared (the image-captioning tutorial)."""
    assert analyse(tmp_path, text).findings == []


IGNITE_DETACH = """\
import torch
import torch.nn as nn


def apply_to_tensor(x, f):
    return f(x)


torch.manual_seed(0)
rnn = nn.GRU(3, 4)
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
h = torch.zeros(1, 1, 4)
for x in torch.randn(3, 5, 1, 3):
    h = apply_to_tensor(h, torch.Tensor.detach)
    out, h = rnn(x, h)
    opt.zero_grad()
    out.sum().backward()
    opt.step()
"""


def test_a_detach_handed_to_a_helper_as_a_value_detaches(tmp_path):
    """ignite's truncated-BPTT engine detaches its state with
    `apply_to_tensor(hidden, torch.Tensor.detach)`: no state is carried."""
    assert analyse(tmp_path, IGNITE_DETACH).findings == []


# A softmax GAN (PyTorch-GAN's shape): the discriminator's loss goes back through the
# generator too (LF009: its step uses both losses' gradients), and the generator's backward
# runs after the discriminator's step (LF002). Both fixes rewrite the same two backwards.
SOFTMAX_GAN = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
generator = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 6))
discriminator = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 1))
optimizer_G = torch.optim.Adam(generator.parameters(), lr=1e-3)
optimizer_D = torch.optim.Adam(discriminator.parameters(), lr=1e-3)
for i in range(3):
    real, z = torch.randn(5, 6), torch.randn(5, 4)
    optimizer_D.zero_grad()
    optimizer_G.zero_grad()
    gen = generator(z)
    d_real, d_fake = discriminator(real), discriminator(gen)
    partition = torch.exp(-d_real).sum() + torch.exp(-d_fake).sum()
    d_loss = (d_real / 5).sum() + torch.log(partition)
    d_loss.backward(retain_graph=True)
    optimizer_D.step()
    g_loss = (d_real / 5).sum() + (d_fake / 5).sum() + torch.log(partition)
    g_loss.backward()
    optimizer_G.step()
"""


def test_a_fix_that_does_not_combine_names_the_fix_kept_and_is_planned_again_after_it():
    """The LF002 reorder and LF009's restriction were both planned on the original lines:
    the first is kept, the second says which fix it could not be combined with, and once
    that fix is written the second is planned again on the new text."""
    first = analyse_source(SourceFile.from_text("gan.py", SOFTMAX_GAN), project=None)
    leak, stale = first.findings
    assert (leak.rule, leak.applied) == ("LF009", True)
    assert stale.rule == "LF002" and stale.fix is None
    assert "together with the fix of LF009 line 17" in stale.fix_unavailable
    assert "run `loopfix apply` again" in stale.fix_unavailable
    second = analyse_source(SourceFile.from_text("gan.py", first.fixed_text), project=None)
    assert [(f.rule, f.applied) for f in second.findings] == [("LF002", True)]


# wiseodd/generative-models' GANs clear both networks' gradients right after each step
# (`reset_grad()`), so nothing accumulates; the reorder still needs a zero_grad() before the
# step, and the reason it gives says which of the two it is
CLEARED_AFTER = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 8))
D = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
G_solver = torch.optim.Adam(G.parameters(), lr=1e-3)
D_solver = torch.optim.Adam(D.parameters(), lr=1e-3)


def reset_grad():
    G.zero_grad()
    D.zero_grad()


for it in range(3):
    D_fake = D(G(torch.randn(16, 4)))
    D_loss = torch.mean(D(torch.randn(16, 8))) - torch.mean(D_fake)
    D_loss.backward(retain_graph=True)
    D_solver.step()
    {clear}
    G_loss = torch.mean(D_fake)
    G_loss.backward()
    G_solver.step()
    {clear}
"""


@pytest.mark.parametrize(
    "clear, reason",
    [
        ("reset_grad()", "`D_solver`'s gradients are cleared after its step (line 21)"),
        ("D.zero_grad()", "`D_solver`'s gradients are cleared after its step (line 21)"),
        ("pass", "`D_solver` steps without a zero_grad() before it in the same block"),
    ],
)
def test_why_a_step_cleared_after_it_gets_no_reorder(tmp_path, clear, reason):
    path = tmp_path / "train.py"
    path.write_text(CLEARED_AFTER.format(clear=clear))
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        exec(compile(path.read_text(), str(path), "exec"), {"__name__": "__main__"})
    findings = analyse_source(SourceFile.read(path), project=None).findings
    (finding,) = [f for f in findings if f.rule == "LF002"]  # without clearing: LF007 too
    assert finding.fix is None or not finding.fix.safe
    assert reason in finding.fix_unavailable
    assert ("accumulate" in finding.fix_unavailable) == (clear == "pass")


COUNTING_HELPER = """\
import torch
import torch.nn as nn


def count_params(model):
    return sum(p.numel() for p in model.parameters())


torch.manual_seed(0)
stream = torch.randint(0, 50, (41, 4))
emb, dec = nn.Embedding(50, 16), nn.Linear(32, 50)
rnn = getattr(nn, "LSTM")(16, 32)  # the cell's kind chosen by a setting
print("parameters:", count_params(rnn))
optimizer = torch.optim.SGD([*emb.parameters(), *rnn.parameters(), *dec.parameters()], lr=0.5)
hidden = None
for i in range(0, stream.size(0) - 1, 5):
    data, targets = stream[i : i + 5], stream[i + 1 : i + 6]
    output, hidden = rnn(emb(data), hidden)
    loss = nn.functional.cross_entropy(dec(output).view(-1, 50), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


def test_a_helper_that_returns_a_number_is_not_taken_for_a_detach(tmp_path):
    """`count_params(model)` leaves no graph in what it returns, but it does not hand its
    argument back detached: LF001's fix must not call it on the state (the patched run then
    raised AttributeError: 'tuple' object has no attribute 'parameters')."""
    script = tmp_path / "train.py"
    script.write_text(COUNTING_HELPER)
    result = analyse_source(SourceFile.read(script), project=None)
    (finding,) = result.findings
    assert finding.rule == "LF001" and "count_params(hidden)" not in result.fixed_text
    verdicts = verify_file(result, VERIFY)
    assert [(v.rule, v.outcome) for v in verdicts] == [("LF001", "equivalent")]


RETAIN_VARIABLES_GAN = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
G = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 5))
D = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
opt_D = torch.optim.Adam(D.parameters(), lr=1e-4)
opt_G = torch.optim.Adam(G.parameters(), lr=1e-4)
for step in range(3):
    prob_real, prob_fake = D(torch.randn(8, 5)), D(G(torch.randn(8, 5)))
    D_loss = -torch.mean(torch.log(prob_real) + torch.log(1.0 - prob_fake))
    G_loss = torch.mean(torch.log(1.0 - prob_fake))
    opt_D.zero_grad()
    D_loss.backward(retain_variables=True)
    opt_D.step()
    opt_G.zero_grad()
    G_loss.backward()
    opt_G.step()
"""


def test_retain_variables_is_renamed_where_a_fix_adds_inputs(tmp_path):
    """`retain_variables=` is `retain_graph=` before PyTorch 0.4 (MorvanZhou's GAN notebook,
    which today's PyTorch refuses with a TypeError). A fix that adds `inputs=` (PyTorch 1.8)
    to that backward renames it: the patched loop runs on today's PyTorch, and gives the
    same steps as the original written with the new name run with every step deferred."""
    from scripts import run_script

    result = analyse_source(SourceFile.from_text("gan.py", RETAIN_VARIABLES_GAN), project=None)
    (finding,) = result.findings
    assert finding.rule == "LF002" and finding.applied
    assert "retain_variables" not in result.fixed_text
    assert finding.fix.title.endswith(RENAME_NOTE)  # the rename is said, not silent
    assert "TypeError" in run_script(RETAIN_VARIABLES_GAN, tmp_path).stderr
    assert run_script(result.fixed_text, tmp_path).returncode == 0
    modern = tmp_path / "gan.py"
    modern.write_text(RETAIN_VARIABLES_GAN.replace("retain_variables", "retain_graph"))
    renamed = analyse_source(SourceFile.read(modern), project=None)
    assert renamed.fixed_text == result.fixed_text
    assert not renamed.findings[0].fix.title.endswith(RENAME_NOTE)
    (verdict,) = verify_file(renamed, RunSettings(device="cpu", iterations=3, timeout=180))
    assert verdict.outcome == "equivalent", verdict


def test_lf009_says_it_renames_retain_variables():
    """LF009's fix adds `inputs=` too, so it renames `retain_variables=` and says so."""
    case = Path(__file__).parent.parent / "corpus/lf009_gan_retain_graph_band_aid/before.py"
    text = case.read_text().replace("retain_graph", "retain_variables")
    result = analyse_source(SourceFile.from_text("gan.py", text), project=None)
    (finding,) = [f for f in result.findings if f.rule == "LF009"]
    assert finding.fix.title.endswith(RENAME_NOTE)
    assert "retain_variables" not in result.fixed_text


SCHEDULE_IN_A_METHOD = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, opt, sched):
        self.model, self.opt, self.sched = model, opt, sched
        self.epoch = 0

    def new_epoch(self):
{new_epoch}
        self.sched.step()

    def train_epoch(self, batches):
        print(self.opt.param_groups[0]["lr"], self.epoch >= 2)
        for x, y in batches:
            self.opt.zero_grad()
            loss = ((self.model(x) - y) ** 2).mean()
            if self.epoch >= 2:
                loss = loss + 0.1 * self.model.weight.pow(2).sum()
            loss.backward()
            self.opt.step()


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
tr = Trainer(model, opt, sched)
batches = [(torch.randn(5, 4), torch.randn(5, 1)) for _ in range(2)]
for epoch in range(3):
    tr.new_epoch()
    tr.train_epoch(batches)
"""
MOVED = (
    "    tr.new_epoch()\n    tr.train_epoch(batches)\n",
    "    tr.train_epoch(batches)\n    tr.new_epoch()\n",
)


@pytest.mark.parametrize(
    "advances", [True, False], ids=["also advances the epoch", "schedule only"]
)
def test_a_schedule_method_that_also_advances_state_is_not_moved(advances, tmp_path):
    """`tr.new_epoch()` steps the scheduler before `tr.train_epoch()` steps the optimizer
    (LF005 in both programs: PyTorch warns). Where it also advances `tr.epoch`, which
    `train_epoch` reads to switch a regulariser on, moving the call after it would switch it
    on an epoch late (the program prints each epoch's learning rate and switch): no fix. A
    method that only steps the schedule is moved, and only the learning rates change."""
    from scripts import run_script

    source = SCHEDULE_IN_A_METHOD.format(new_epoch="        self.epoch += 1" if advances else "")
    original = run_script(source, tmp_path)
    assert "before `optimizer.step()`" in original.stderr
    moved = run_script(source.replace(*MOVED), tmp_path)
    switches = [
        line.split()[1] for line in (original.stdout, moved.stdout) for line in line.splitlines()
    ]
    result = analyse_source(SourceFile.from_text("train.py", source), project=None)
    (finding,) = result.findings
    assert finding.rule == "LF005"
    if advances:
        assert switches[:3] != switches[3:]  # the move would change more than the schedule
        assert finding.fix is None
        assert "self.epoch += 1" in finding.fix_unavailable
    else:
        assert finding.fix is not None and finding.applied
        assert result.fixed_text == source.replace(*MOVED)


INPUT_GRADIENT = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
D = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))
opt_d = torch.optim.Adam(D.parameters(), lr=1e-3)
for i in range(3):
    real = torch.randn(4, 3).requires_grad_(True)
    d_real = D(real)
    (g,) = torch.autograd.grad(d_real.sum(), real{keep})
{use}
    opt_d.zero_grad()
    d_loss.backward()
    print(D[0].weight.grad.sum().item())
    opt_d.step()
"""
PENALTY = "    d_loss = F.softplus(-d_real).mean() + 5 * g.pow(2).sum(1).mean()"
LOGGED = (
    '    print("input gradient norm", g.norm().item())\n    d_loss = F.softplus(-d_real).mean()'
)


def test_a_gradient_penalty_without_create_graph_gets_no_retain_fix(tmp_path):
    """An R1 penalty from `torch.autograd.grad` without `create_graph=True` frees the graph
    the discriminator's backward needs (LF003). Keeping the graph makes the run pass with
    the penalty a constant: the weights' gradients are those of the loss without it, while
    with `create_graph=True` (what the author meant) they differ. No fix, safe or unsafe."""
    from scripts import run_script

    source = INPUT_GRADIENT.format(keep="", use=PENALTY)
    assert "a second time" in run_script(source, tmp_path).stderr
    retained = run_script(INPUT_GRADIENT.format(keep=", retain_graph=True", use=PENALTY), tmp_path)
    created = run_script(INPUT_GRADIENT.format(keep=", create_graph=True", use=PENALTY), tmp_path)
    without = run_script(INPUT_GRADIENT.format(keep=", retain_graph=True", use=LOGGED), tmp_path)
    first = [
        next(line for line in run.stdout.splitlines() if not line.startswith("input"))
        for run in (retained, created, without)
    ]
    assert first[0] == first[2] != first[1]  # retained: as if the penalty were not there
    result = analyse_source(
        SourceFile.from_text("r1.py", source), project=None, options=Options(unsafe_fixes=True)
    )
    (finding,) = result.findings
    assert finding.rule == "LF003" and finding.fix is None
    assert "create_graph=True" in finding.fix_unavailable


def test_an_input_gradient_only_logged_gets_the_retain_fix(tmp_path):
    """The same input gradient only printed: keeping its graph is the whole fix."""
    from scripts import run_script

    source = INPUT_GRADIENT.format(keep="", use=LOGGED)
    assert "a second time" in run_script(source, tmp_path).stderr
    result = analyse_source(SourceFile.from_text("logged.py", source), project=None)
    (finding,) = result.findings
    assert finding.rule == "LF003" and finding.applied
    assert "retain_graph=True" in result.fixed_text
    assert run_script(result.fixed_text, tmp_path).returncode == 0


TRAIN_MODE_WITH_THE_SCHEDULE = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.5), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.1)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]


def new_epoch(model, sched):
    sched.step()
    model.train()


def validate(model):
    model.eval()


for epoch in range(3):
    new_epoch(model, sched)
    for x, y in data:
        print(model.training)
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
    validate(model)
"""


def test_a_schedule_function_that_also_sets_train_mode_is_not_moved(tmp_path):
    """`new_epoch(model, sched)` steps the scheduler and puts the model back in train mode
    after `validate` left it in eval mode: moved after the batch loop (what verification
    called "changed as intended", since it compares learning rates), every batch from the
    second epoch on would train in eval mode (dropout off). Reported, without a fix."""
    from scripts import run_script

    moved = TRAIN_MODE_WITH_THE_SCHEDULE.replace(
        "    new_epoch(model, sched)\n    for x, y in data:", "    for x, y in data:"
    ).replace("    validate(model)\n", "    new_epoch(model, sched)\n    validate(model)\n")
    assert set(run_script(TRAIN_MODE_WITH_THE_SCHEDULE, tmp_path).stdout.split()) == {"True"}
    assert "False" in run_script(moved, tmp_path).stdout.split()
    result = analyse_source(
        SourceFile.from_text("train.py", TRAIN_MODE_WITH_THE_SCHEDULE), project=None
    )
    (finding,) = result.findings
    assert finding.rule == "LF005" and finding.fix is None
    assert "model.train()" in finding.fix_unavailable


RETAINED_ACTOR_CRITIC = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
policy = nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 2))
qnet = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
q_optimizer = torch.optim.Adam(qnet.parameters(), lr=1e-2)
policy_optimizer = torch.optim.Adam(policy.parameters(), lr=1e-2)
for step in range(3):
    state, action, reward = torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 1)
    predict_q = qnet(torch.cat([state, action], 1))
    predict_new_q = qnet(torch.cat([state, policy(state)], 1))
    q_loss = F.mse_loss(predict_q, reward)
    policy_loss = -predict_new_q.mean()
    q_optimizer.zero_grad()
    q_loss.backward(retain_graph=True)
    q_optimizer.step()
    policy_optimizer.zero_grad()
    policy_loss.backward(retain_graph=True)
    policy_optimizer.step()
"""


def test_a_reorder_replaces_a_lone_retain_graph_with_inputs(tmp_path):
    """An actor-critic update whose backwards both say `retain_graph=True` (an RDPG
    implementation's): the reorder drops the keyword where no later backward needs it and
    restricts the policy's backward with `inputs=`. Written in the keyword's place, not
    appended after its removal (that gave `policy_loss.backward(, inputs=...)`, a text that
    does not parse, so the fix was refused as unsafe). The original fails; the fix runs and
    verifies equivalent."""
    from scripts import run_script

    from loopfix.rules import rule_by_code

    script = tmp_path / "train.py"
    script.write_text(RETAINED_ACTOR_CRITIC)
    result = analyse_source(SourceFile.read(script), [rule_by_code("LF002")], project=None)
    (finding,) = result.findings
    assert finding.fix is not None and finding.fix.safe, finding.fix_unavailable
    assert "    policy_loss.backward(inputs=list(policy.parameters()))\n" in result.fixed_text
    assert "modified by an inplace operation" in run_script(RETAINED_ACTOR_CRITIC, tmp_path).stderr
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.outcome == "equivalent", verdict


IMAGE_AND_NETWORK = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class GeneratedImage(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(*shape))

    def forward(self):
        return self.weight


image = GeneratedImage((2, 4))
net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
opt_img = torch.optim.SGD(image.parameters(), lr=0.1)
opt_net = torch.optim.SGD(net.parameters(), lr=0.1)
for step in range(3):
    X = image()
    out = net(X)
    loss_net = (out - 1).pow(2).mean()
    loss_img = -out.mean()
    opt_net.zero_grad()
    loss_net.backward(retain_graph=True)
    opt_net.step()
    opt_img.zero_grad()
    loss_img.backward()
    opt_img.step()
"""


def test_a_reorder_keeps_a_network_loss_off_a_parameter_module(tmp_path):
    """`X = image()` of a module that is its parameter still reaches that parameter: the
    reorder restricts the network's backward with `inputs=`, or its gradient would pile up
    in the image's (which its optimizer steps). The original fails; the fix verifies."""
    from scripts import run_script

    result = analyse(tmp_path, IMAGE_AND_NETWORK)
    (finding,) = result.findings
    assert finding.rule == "LF002" and finding.fix is not None and finding.fix.safe
    assert "loss_net.backward(retain_graph=True, inputs=list(net.parameters()))" in (
        result.fixed_text
    )
    assert "modified by an inplace operation" in run_script(IMAGE_AND_NETWORK, tmp_path).stderr
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.outcome == "equivalent", verdict


TWO_SCHEDULES_IN_ONE_CALL = """\
import torch
import torch.nn as nn
from torch.optim import lr_scheduler

torch.manual_seed(0)


class Trainer(nn.Module):
    def __init__(self):
        super().__init__()
        self.gen, self.dis = nn.Linear(4, 4), nn.Linear(4, 1)
        self.dis_opt = torch.optim.SGD(self.dis.parameters(), lr=0.1)
        self.gen_opt = torch.optim.SGD(self.gen.parameters(), lr=0.1)
        self.dis_scheduler = lr_scheduler.StepLR(self.dis_opt, step_size=1, gamma=0.5)
        self.gen_scheduler = lr_scheduler.StepLR(self.gen_opt, step_size=1, gamma=0.5)

    def dis_update(self, x_a, x_b):
        self.dis_opt.zero_grad()
        loss = self.dis(self.gen(x_a).detach()).mean() - self.dis(x_b).mean()
        loss.backward()
        self.dis_opt.step()

    def gen_update(self, x_a):
        self.gen_opt.zero_grad()
        loss = -self.dis(self.gen(x_a)).mean()
        loss.backward()
        print("gen lr", self.gen_opt.param_groups[0]["lr"])
        self.gen_opt.step()

    def update_learning_rate(self):
        self.dis_scheduler.step()
        self.gen_scheduler.step()


trainer = Trainer()
for it in range(3):
    trainer.update_learning_rate()
    images_a, images_b = torch.randn(2, 4), torch.randn(2, 4)
    trainer.dis_update(images_a, images_b)
    trainer.gen_update(images_a)
"""


def test_a_call_stepping_two_schedules_moves_after_both_optimizers(tmp_path):
    """MUNIT's `trainer.update_learning_rate()` steps the discriminator's and the
    generator's schedulers before `dis_update` and `gen_update` step their optimizers. The
    fix moves it after the last of them (after `dis_update` only, the generator's first
    step still used the decayed rate, and PyTorch still warned); verification accepts it,
    although the generator's first gradients differ: they go through a discriminator just
    stepped with the other rate."""
    from scripts import run_script

    result = analyse(tmp_path, TWO_SCHEDULES_IN_ONE_CALL)
    (finding,) = result.findings
    assert finding.rule == "LF005" and finding.fix is not None and finding.fix.safe
    assert result.fixed_text.endswith(
        "    trainer.gen_update(images_a)\n    trainer.update_learning_rate()\n"
    )
    assert "gen lr 0.05" in run_script(TWO_SCHEDULES_IN_ONE_CALL, tmp_path).stdout
    assert "gen lr 0.1\n" in run_script(result.fixed_text, tmp_path).stdout
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.outcome == "changed as intended", verdict


@pytest.mark.parametrize(
    ("change", "outcome"),
    [
        (("for it in range(3):\n",
          "trainer.dis_update(torch.randn(2, 4), torch.randn(2, 4))\nfor it in range(3):\n"),
         None),
        (("        self.gen_opt.step()", '        getattr(self, "gen_opt").step()'), None),
        (("    trainer.dis_update(images_a, images_b)\n    trainer.gen_update(images_a)\n",
          "    trainer.gen_update(images_a)\n    trainer.dis_update(images_a, images_b)\n"),
         "changed as intended"),
    ],
    ids=["warmed-up discriminator", "a step loopfix does not follow", "generator first"],
)  # fmt: skip
def test_a_call_stepping_two_schedules_is_moved_only_where_both_end_after(
    change, outcome, tmp_path
):
    """The call stepping both schedulers gets no fix where one of its optimizers is warmed
    up before the loop (one `dis_update` there: moving the call would put that schedule
    off), or steps where loopfix does not follow it; where the generator updates first,
    moving the call after `dis_update` is the fix, and verification judges every
    optimizer's rates."""
    source = TWO_SCHEDULES_IN_ONE_CALL.replace(*change)
    assert source != TWO_SCHEDULES_IN_ONE_CALL
    result = analyse(tmp_path, source)
    (finding,) = result.findings
    assert finding.rule == "LF005"
    if outcome is None:
        assert finding.fix is None
        assert "whose optimizer steps before the loop or where loopfix does not see it" in (
            finding.fix_unavailable
        )
        return
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.outcome == outcome, verdict


def test_schedules_stepped_where_they_exist_are_moved_as_steps(tmp_path):
    """MUNIT writes `if self.dis_scheduler is not None: self.dis_scheduler.step()` in
    `update_learning_rate()`: each step runs whenever there is a schedule, so the call is a
    scheduler step before both updates (PyTorch warns), moved after them and verified."""
    source = TWO_SCHEDULES_IN_ONE_CALL.replace(
        "        self.dis_scheduler.step()\n        self.gen_scheduler.step()\n",
        "        if self.dis_scheduler is not None:\n            self.dis_scheduler.step()\n"
        "        if self.gen_scheduler is not None:\n            self.gen_scheduler.step()\n",
    )
    assert "if self.gen_scheduler is not None" in source
    result = _scheduler_call_moved_and_verified(source, tmp_path)
    assert result.fixed_text.endswith(
        "    trainer.gen_update(images_a)\n    trainer.update_learning_rate()\n"
    )


def _scheduler_call_moved_and_verified(source: str, tmp_path):
    """Run as written, the two-schedule trainer `source` takes the generator's first step
    at a rate its scheduler already lowered (it prints 0.05, not 0.1); loopfix finds one
    LF005 with a safe fix, and running the fixed program verifies as changed as intended.
    Returns the analysis."""
    from scripts import run_script

    assert "gen lr 0.05" in run_script(source, tmp_path).stdout
    result = analyse(tmp_path, source)
    (finding,) = result.findings
    assert finding.rule == "LF005" and finding.fix is not None and finding.fix.safe
    (verdict,) = verify_file(result, VERIFY)
    assert verdict.outcome == "changed as intended", verdict
    return result


GET_SCHEDULER = """

def get_scheduler(optimizer, policy="step"):
    if policy == "constant":
        scheduler = None
    elif policy == "step":
        scheduler = lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)
    else:
        return NotImplementedError("learning rate policy [%s] is not implemented" % policy)
    return scheduler


class Trainer"""


def test_schedules_built_by_a_helper_that_may_return_none_are_schedules(tmp_path):
    """MUNIT and UNIT build their schedulers with `get_scheduler(opt, hp)`, which returns a
    `StepLR` on the optimizer it is given, or None (and `return`s, not raises, an error for
    an unknown policy): the scheduler stepped on each call is the one on that optimizer. The
    call stepping both before the updates is found (PyTorch warns), moved and verified."""
    source = (
        TWO_SCHEDULES_IN_ONE_CALL.replace("\n\nclass Trainer", GET_SCHEDULER, 1)
        .replace(
            "lr_scheduler.StepLR(self.dis_opt, step_size=1, gamma=0.5)",
            "get_scheduler(self.dis_opt)",
        )
        .replace(
            "lr_scheduler.StepLR(self.gen_opt, step_size=1, gamma=0.5)",
            "get_scheduler(self.gen_opt)",
        )
    )
    assert "self.gen_scheduler = get_scheduler(self.gen_opt)" in source
    _scheduler_call_moved_and_verified(source, tmp_path)
