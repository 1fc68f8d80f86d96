"""Shapes from real code that a rule must not report (found by scanning real code bases)."""

from __future__ import annotations

import textwrap

import pytest
from scripts import rules_reported, run_script

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

SILENT = {
    "retain for a closure reused by the caller (torch.autograd.gradcheck)": """
        import torch

        def jacobian_rows(output, inputs):
            def vjp(grad_output):
                return torch.autograd.grad(output, inputs, grad_output, retain_graph=True)
            return [vjp(row) for row in torch.eye(output.numel())]
    """,
    "retain on a loss built from a parameter": """
        import torch

        def compare(prediction):
            prediction.sum().backward(retain_graph=True)
    """,
    "retain on a loss from a function defined elsewhere": """
        import torch
        import torch.nn as nn
        from losses import build_loss

        model = nn.Linear(2, 2)
        loss = build_loss(model)
        loss.backward(retain_graph=True)
    """,
    "retained graph kept on self for a later call": """
        import torch
        import torch.nn as nn

        class Probe:
            def __init__(self):
                self.net = nn.Linear(2, 1)

            def first(self, x):
                self.loss = self.net(x).sum()
                self.loss.backward(retain_graph=True)
    """,
    # found by the fuzz test: a hand-written Accelerate-like wrapper passes retain_graph on
    # through **kwargs; whatever the wrapper's variable is called, the caller's keyword holds
    "retain_graph passed through a wrapper's **kwargs": """
        import torch
        import torch.nn as nn

        class Wrapper:
            def backward(self, loss, **kwargs):
                loss.backward(**kwargs)

        helper = Wrapper()
        encoder, head = nn.Linear(4, 4), nn.Linear(4, 1)
        optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
        for _ in range(3):
            feats = encoder(torch.randn(2, 4))
            helper.backward(head(feats).sum(), retain_graph=True)
            helper.backward(feats.pow(2).mean())
            optimizer.step()
            optimizer.zero_grad()
    """,
    # a step skipped on a bad loss: the zero_grad at the top clears what that batch left
    "a step skipped when the loss is not finite": """
        import torch
        import torch.nn as nn

        model = nn.Linear(3, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(3)]:
            opt.zero_grad()
            loss = ((model(x) - y) ** 2).mean()
            loss.backward()
            if torch.isfinite(loss):
                opt.step()
    """,
}


def run_and_analyse(source: str, tmp_path):
    """The program run (its completed process, for the truth) and loopfix's findings on it,
    analysed as `train.py` alone."""
    from scripts import run_script

    findings = analyse_source(SourceFile.from_text("train.py", source), project=None).findings
    return run_script(source, tmp_path), findings


@pytest.mark.parametrize("name", sorted(SILENT))
def test_not_reported(name):
    text = textwrap.dedent(SILENT[name])
    result = analyse_source(SourceFile.from_bytes("snippet.py", text.encode()))
    assert result.errors == [] and result.findings == []


def test_the_same_loss_built_in_view_is_reported():
    text = textwrap.dedent(
        """
        import torch
        import torch.nn as nn

        model = nn.Linear(2, 2)
        loss = model(torch.randn(3, 2)).sum()
        loss.backward(retain_graph=True)
        """
    )
    result = analyse_source(SourceFile.from_bytes("snippet.py", text.encode()))
    assert [f.rule for f in result.findings] == ["LF004"]


TWO_RECURRENT_LOOPS = """
    import torch
    import torch.nn as nn


    def train_gru():
        gru, readout = nn.GRU(4, 6), nn.Linear(6, 1)
        opt = torch.optim.SGD([*gru.parameters(), *readout.parameters()], lr=0.1)
        h = torch.zeros(1, 2, 6)
        for step in range(3):
            out, h = gru(torch.randn(5, 2, 4), h)
            loss = readout(out).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()


    def train_lstm():
        lstm, readout = nn.LSTM(4, 6), nn.Linear(6, 1)
        opt = torch.optim.SGD([*lstm.parameters(), *readout.parameters()], lr=0.1)
        hidden = (torch.zeros(1, 2, 6), torch.zeros(1, 2, 6))
        for step in range(3):
            out, hidden = lstm(torch.randn(5, 2, 4), hidden)
            loss = readout(out).pow(2).mean()
            opt.zero_grad()
            loss.backward(retain_graph=True)
            opt.step()


    train_gru()
    train_lstm()
"""


def test_each_carried_state_has_its_own_backwards(tmp_path):
    """Two recurrent loops in one file, and only the second keeps its graph with
    retain_graph=True: only its finding says so, and only its fix drops the keyword (each
    state's backwards are its own, not the last state's of the file). Both fixes verify."""
    from loopfix.verify.harness import RunSettings
    from loopfix.verify.verifier import verify_file

    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TWO_RECURRENT_LOOPS))
    result = analyse_source(SourceFile.read(script), project=None)
    gru, lstm = result.findings
    assert "retain_graph=True" not in gru.message and "retain_graph" not in gru.fix.title
    assert "retain_graph=True only delays the failure" in lstm.message
    assert lstm.fix.title.endswith("and drop the retain_graph=True it needed")
    assert result.fixed_text.count("retain_graph=True") == 0
    assert result.fixed_text.count(".detach()") == 2
    verdicts = verify_file(result, RunSettings(device="cpu", iterations=3, timeout=180))
    assert [(v.rule, v.outcome) for v in verdicts] == [("LF001", "equivalent")] * 2


KEPT_FOR_AFTER_THE_LOOP = """\
import torch

torch.manual_seed(0)
z = torch.randn(8, requires_grad=True)  # a latent, given its own gradient after the loop
w = torch.randn(8, requires_grad=True)
optimizer = torch.optim.SGD([w], lr=0.1)
for step in range(3):
    features = z.exp()
    loss = (features * w).sum()
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
{after}
"""


@pytest.mark.parametrize(
    ("after", "reported"),
    [("z.grad = None\nfeatures.sum().backward()", []), ("print(loss.item())", ["LF004"])],
    ids=["a backward after the loop", "none after it"],
)
def test_a_retained_graph_a_later_backward_may_use_is_not_needless(after, reported, tmp_path):
    """The loop's last `retain_graph=True` keeps `features`' graph, which the backward after
    the loop goes through (without the keyword it raises "backward through the graph a
    second time"); loopfix does not see that graph (`z.exp()` of a hand-made tensor), so a
    later backward it cannot see keeps the keyword. With nothing after the loop, the keyword
    is needless."""
    from scripts import run_script

    source = KEPT_FOR_AFTER_THE_LOOP.format(after=after)
    assert run_script(source, tmp_path).returncode == 0
    removed = source.replace("retain_graph=True", "")
    second_time = "Trying to backward through the graph a second time"
    assert (second_time in run_script(removed, tmp_path).stderr) is (not reported)
    findings = analyse_source(SourceFile.from_text("train.py", source), project=None).findings
    assert [f.rule for f in findings] == reported


UNSEEN_NETWORK = """\
import torch
import torch.nn as nn


class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        self.actor, self.critic = nn.Linear(4, 2), nn.Linear(4, 1)
        self.actor_params = list(self.actor.parameters())
        self.critic_params = list(self.critic.parameters())

    def forward(self, obs):
        return {{"log_pi": self.actor(obs).sum(-1), "v": self.critic(obs)}}


class Config:
    network_fn = Heads


class Agent:
    def __init__(self, config):
        self.network = config.network_fn()  # a class loopfix cannot see through
        self.opt = torch.optim.Adam(self.network.parameters(), 1e-3)
        self.actor_opt = torch.optim.Adam(self.network.actor_params, 1e-3)
        self.critic_opt = torch.optim.Adam(self.network.critic_params, 1e-3)

    def step(self, obs, ret):
        prediction = self.network(obs)
        policy_loss = -prediction{policy}.mean()
        value_loss = (ret - prediction["v"]).pow(2).mean()
        self.actor_opt.zero_grad()
        policy_loss.backward()
        self.actor_opt.step()
        self.critic_opt.zero_grad()
        value_loss.backward()
        self.critic_opt.step()


torch.manual_seed(0)
agent = Agent(Config())
for it in range(3):
    agent.step(torch.randn(16, 4), torch.randn(16, 1))
"""


@pytest.mark.parametrize(
    ("policy", "reported"),
    [('["log_pi"]', []), ('["v"].sum(-1)', ["LF003"])],
    ids=["each loss from its own item", "both losses from one item"],
)
def test_items_of_a_network_loopfix_cannot_see_are_apart(policy, reported, tmp_path):
    """A network built by a factory (DeepRL's `config.network_fn()`), so that loopfix does
    not see its forward, returns a dict: the actor's and the critic's losses read two items,
    which here share nothing, and the loop runs. Two losses from the same item do share its
    graph and raise "backward through the graph a second time": still reported."""
    source = UNSEEN_NETWORK.format(policy=policy)
    done, findings = run_and_analyse(source, tmp_path)
    assert ("a second time" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported


DOMAIN_ADVERSARIAL = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class ReverseLayer(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, lam):
        ctx.lam = lam
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return -ctx.lam * grad, None


def grad_reverse(x, lam=1.0):
    return ReverseLayer.apply(x, lam)


class DomainHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 1))

    def forward(self, features):
        return self.net({head_input})


torch.manual_seed(0)
feat = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8))
clf = nn.Linear(8, 3)
dom = DomainHead()
opt_f = torch.optim.SGD([*feat.parameters(), *clf.parameters()], lr=0.05)
opt_d = torch.optim.SGD(dom.parameters(), lr=0.05)
for it in range(3):
    xs, ys, xt = torch.randn(5, 6), torch.randint(0, 3, (5,)), torch.randn(5, 6)
    opt_f.zero_grad()
    opt_d.zero_grad()
    fs, ft = feat(xs), feat(xt)
    both = {reversed_input}
    d_loss = F.binary_cross_entropy_with_logits(
        dom(both), torch.cat([torch.ones(5, 1), torch.zeros(5, 1)])
    )
    d_loss.backward(retain_graph=True)
    opt_d.step()
    pd = dom(ft)  # a confusion term through the domain head
    f_loss = F.cross_entropy(clf(fs), ys) + 0.1 * F.binary_cross_entropy_with_logits(
        pd, torch.full_like(pd, 0.5)
    )
    f_loss.backward()
    opt_f.step()
print(float(sum(p.sum() for p in feat.parameters())))
"""


@pytest.mark.parametrize(
    ("head_input", "reversed_input"),
    [
        ("features", "grad_reverse(torch.cat([fs, ft]))"),
        ("features", "torch.cat([fs, ft])\n    both.register_hook(lambda grad: -grad)"),
        ("grad_reverse(features)", "torch.cat([fs, ft])"),
    ],
    ids=["reversal function in the loop", "reversing hook", "reversal in a module's forward"],
)
def test_a_gradient_reversal_layer_is_not_a_gradient_leak(head_input, reversed_input, tmp_path):
    """DANN trains the feature extractor against the domain head on purpose: the domain
    loss reaches the features through a gradient reversal layer (an autograd function that
    negates the gradient, or a hook), and the extractor's optimizer steps with it. LF009's
    fix (the domain loss's backward restricted with `inputs=`) would drop that gradient and
    change the extractor's weights, so nothing is reported."""
    from scripts import run_script

    source = DOMAIN_ADVERSARIAL.format(head_input=head_input, reversed_input=reversed_input)
    done = run_script(source, tmp_path)
    assert done.returncode == 0, done.stderr
    restricted = source.replace(
        "d_loss.backward(retain_graph=True)",
        "d_loss.backward(retain_graph=True, inputs=list(dom.parameters()))",
    )
    assert run_script(restricted, tmp_path).stdout != done.stdout  # the fix changes training
    findings = analyse_source(SourceFile.from_text("dann.py", source), project=None).findings
    assert [f.rule for f in findings] == []


CLEARED_BY_A_HELPER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def clear_grads(model):
    for p in model.parameters():
        p.grad = None


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, x):
        return self.fc(x)

    def reset_grads(self):
        for p in self.parameters():
            p.grad = None


torch.manual_seed(0)
m = Net()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for i in range(3):
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    (expected,) = torch.autograd.grad(F.mse_loss(m(x), y), m.fc.weight)
    F.mse_loss(m(x), y).backward()
    assert torch.allclose(m.fc.weight.grad, expected), "the step uses earlier batches' gradients"
    opt.step()
    {clear}
"""


@pytest.mark.parametrize(
    ("clear", "reported"),
    [("clear_grads(m)", []), ("m.reset_grads()", []), ("pass", ["LF007"])],
    ids=["a helper function", "a model method", "nothing"],
)
def test_gradients_cleared_by_a_helper_are_cleared(clear, reported, tmp_path):
    """A function or a model method that sets each parameter's `.grad` to None clears the
    gradients as `zero_grad()` does: each step uses its own batch's gradient (the program
    checks it), and LF007 says nothing. Without it the gradients pile up: reported."""
    source = CLEARED_BY_A_HELPER.format(clear=clear)
    done, findings = run_and_analyse(source, tmp_path)
    assert (done.returncode == 0) is not reported, done.stderr
    assert [f.rule for f in findings] == reported


FROZEN_BACKBONE = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def load_backbone():
    net = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 8), nn.Tanh())
    for p in net.parameters():
        p.requires_grad = {flag}
    return net.eval()


torch.manual_seed(0)
backbone = load_backbone()
cls_head, reg_head = nn.Linear(8, 3), nn.Linear(8, 1)
opt_cls = torch.optim.SGD(cls_head.parameters(), lr=0.1)
opt_reg = torch.optim.SGD(reg_head.parameters(), lr=0.1)
for it in range(3):
    x, yc, yr = torch.randn(5, 6), torch.randint(0, 3, (5,)), torch.randn(5, 1)
    feat = backbone(x)
    lc = F.cross_entropy(cls_head(feat), yc)
    opt_cls.zero_grad()
    lc.backward()
    opt_cls.step()
    lr_ = F.mse_loss(reg_head(feat), yr)
    opt_reg.zero_grad()
    lr_.backward()
    opt_reg.step()
"""

FROZEN_RECURRENCE = {
    "built frozen": """\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
update = nn.GRUCell(4, 8).requires_grad_(False)
head = nn.Linear(8, 1)
opt = torch.optim.SGD(head.parameters(), lr=0.1)
memory = torch.zeros(2, 8)
for i in range(4):
    memory = update(torch.randn(2, 4), memory)
    loss = F.mse_loss(head(memory), torch.randn(2, 1))
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
    "a class that freezes what it builds": """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Reservoir(nn.Module):
    def __init__(self, n_in, n_res):
        super().__init__()
        self.rnn = nn.RNN(n_in, n_res, batch_first=True)
        for p in self.rnn.parameters():
            p.requires_grad = False

    def forward(self, x, h=None):
        return self.rnn(x, h)


torch.manual_seed(0)
reservoir, readout = Reservoir(3, 16), nn.Linear(16, 1)
opt = torch.optim.Adam(readout.parameters(), lr=1e-2)
series, target = torch.randn(1, 40, 3), torch.randn(1, 40, 1)
h = None
for i in range(0, 40, 10):
    states, h = reservoir(series[:, i : i + 10], h)
    loss = F.mse_loss(readout(states), target[:, i : i + 10])
    opt.zero_grad()
    loss.backward()
    opt.step()
""",
}


@pytest.mark.parametrize(("flag", "reported"), [("False", []), ("True", ["LF003"])])
def test_a_module_a_factory_returns_frozen_builds_no_graph(flag, reported, tmp_path):
    """A backbone frozen by the function that builds it (`load_backbone()`), shared by two
    heads with their own backwards: nothing autograd saves is freed twice and it runs.
    Trainable, the second backward goes through the freed backbone graph and raises."""
    source = FROZEN_BACKBONE.format(flag=flag)
    done, findings = run_and_analyse(source, tmp_path)
    assert ("a second time" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported


@pytest.mark.parametrize("name", FROZEN_RECURRENCE)
def test_a_state_from_a_frozen_recurrence_carries_no_graph(name, tmp_path):
    """A recurrent state computed by a frozen cell (built frozen, or by a class whose
    `__init__` freezes what it builds: an echo state network's reservoir) requires no grad:
    carrying it into the next batch is not LF001, and the program runs."""
    from scripts import run_script

    source = FROZEN_RECURRENCE[name]
    assert run_script(source, tmp_path).returncode == 0
    trainable = source.replace("requires_grad_(False)", "requires_grad_(True)").replace(
        "p.requires_grad = False", "p.requires_grad = True"
    )
    assert "a second time" in run_script(trainable, tmp_path).stderr
    assert analyse_source(SourceFile.from_text("t.py", source), project=None).findings == []
    trained = analyse_source(SourceFile.from_text("t.py", trainable), project=None).findings
    assert [f.rule for f in trained] == ["LF001"]


def test_a_backbone_frozen_by_a_factory_in_another_module(tmp_path):
    """The same frozen backbone, built by `load_backbone()` in `backbone.py`."""
    from scripts import run_script

    from loopfix.project import project_for

    source = FROZEN_BACKBONE.format(flag="False")
    factory, loop = source.split("\n\n\ntorch.manual_seed(0)\n")
    (tmp_path / "backbone.py").write_text(factory + "\n")
    main = tmp_path / "main.py"
    main.write_text(
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from backbone import load_backbone\n\ntorch.manual_seed(0)\n" + loop
    )
    assert run_script(main.read_text(), tmp_path).returncode == 0
    result = analyse_source(SourceFile.read(main), project=project_for(main))
    assert result.findings == []


DETACHED_WHEN_A_TENSOR = """\
import torch
import torch.nn as nn


def cut_graph(state):
    if isinstance(state, (list, tuple)):
        return tuple(cut_graph(v) for v in state)
    return {helper_return}


torch.manual_seed(0)
rnn = nn.LSTM(2, 3)
opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
hidden = None
for i, x in enumerate(torch.randn(12, 1, 2).split(3)):
    out, hidden = rnn(x, hidden)
    loss = out.pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    {cut}
"""


@pytest.mark.parametrize(
    ("helper_return", "cut", "reported"),
    [
        ("state.detach() if torch.is_tensor(state) else state", "hidden = cut_graph(hidden)", []),
        ("state", "hidden = tuple(h.detach() if torch.is_tensor(h) else h for h in hidden)", []),
        (
            "state.detach() if isinstance(state, torch.Tensor) else state",
            "hidden = cut_graph(hidden)",
            [],
        ),
        ("state", "hidden = cut_graph(hidden)", ["LF001"]),
    ],
    ids=["helper with is_tensor", "is_tensor per item", "helper with isinstance", "no detach"],
)
def test_a_state_detached_when_it_is_a_tensor_is_detached(helper_return, cut, reported, tmp_path):
    """`x.detach() if torch.is_tensor(x) else x` (or `isinstance(x, torch.Tensor)`):
    what is not a tensor holds no graph, so the state is detached and the loop runs. A
    helper that detaches nothing leaves the graph, which the next batch's backward goes
    through a second time: reported."""
    source = DETACHED_WHEN_A_TENSOR.format(helper_return=helper_return, cut=cut)
    done, findings = run_and_analyse(source, tmp_path)
    assert ("a second time" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported


TOTAL_UNDER_NO_GRAD = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
running = 0.0
for it in range(4):
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
{add}
print(running.requires_grad)
"""


@pytest.mark.parametrize(
    ("add", "reported"),
    [
        ("    with torch.no_grad():\n        running += loss", []),
        ("    running += loss", ["LF006"]),
    ],
    ids=["under no_grad", "with grad"],
)
def test_a_total_added_under_no_grad_keeps_no_graph(add, reported, tmp_path):
    """`running += loss` under `torch.no_grad()` makes a sum without a graph (the program
    prints `requires_grad`): nothing is kept. With grad enabled, the total keeps every
    iteration's graph: reported."""
    source = TOTAL_UNDER_NO_GRAD.format(add=add)
    done, findings = run_and_analyse(source, tmp_path)
    assert done.stdout.strip() == str(bool(reported)), done.stderr
    assert [f.rule for f in findings] == reported


TOTAL_UNDER_AN_ALIAS = """\
import torch
import torch.nn as nn

{alias}

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
running = 0.0
for it in range(4):
    x, y = torch.randn(4, 3), torch.randn(4, 1)
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    with {context}:
        running += loss
print(running.requires_grad)
"""


@pytest.mark.parametrize(
    ("alias", "context", "reported"),
    [
        ("no_grad = torch.no_grad", "no_grad()", []),
        ("inference = torch.inference_mode", "inference()", []),
        ("evaluation = torch.no_grad()", "evaluation", []),
        ("def frozen():\n    return torch.no_grad()", "frozen()", []),
        ("no_grad = torch.enable_grad", "no_grad()", ["LF006"]),
        ("no_grad = torch.no_grad\nno_grad = torch.enable_grad", "no_grad()", ["LF006"]),
    ],
    ids=["class alias", "inference alias", "context made once", "function", "enable", "rebound"],
)
def test_a_total_added_under_a_no_grad_alias_keeps_no_graph(alias, context, reported, tmp_path):
    """A name the module binds once to one of torch's no-grad switches is that switch (the
    program prints whether the total requires grad); a name bound to `enable_grad`, or bound
    twice, is not taken for one."""
    source = TOTAL_UNDER_AN_ALIAS.format(alias=alias, context=context)
    done, findings = run_and_analyse(source, tmp_path)
    assert done.stdout.strip() == str(bool(reported)), done.stderr
    assert [f.rule for f in findings] == reported


WARMED_UP_SCHEDULE = """\
import warnings

import torch
import torch.nn as nn

warnings.simplefilter("always")


def train_one_epoch(model, opt, loader):
    for x, y in loader:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()


def warm_up(model, opt, loader):
    for group in opt.param_groups:
        group["lr"] = 0.01
    train_one_epoch(model, opt, loader)
    for group in opt.param_groups:
        group["lr"] = 0.1


def warm_up_on(model, opt, batches, n):
    for x, y in batches[:n]:
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()


def main(warm=False):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
{warm_up}
    for epoch in range(3):
        sched.step()
        train_one_epoch(model, opt, loader)


main()
"""


# a warm-up loop over the batches stepping the optimizer it is given by the name `name`
WARM_UP_THROUGH = """\
    for x, y in loader:
        {name}.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        {name}.step()"""

# a warm-up `while` loop over the batches, run while `n < {warm}`
WARM_UP_WHILE = """\
    n = 0
    limit = {warm}
    it = iter(loader)
    while n < limit:
        x, y = next(it)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        n += 1"""


# a warm-up `while True` loop left by a `break` after its step
WARM_UP_UNTIL = """\
    n = 0
    it = iter(loader)
    while True:
        x, y = next(it)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        n += 1
        if n >= 2:
            break"""


@pytest.mark.parametrize(
    ("warm_up", "reported"),
    [
        (
            "    for x, y in loader:\n        opt.zero_grad()\n"
            "        nn.functional.mse_loss(model(x), y).backward()\n        opt.step()",
            [],
        ),
        ("    warm_up(model, opt, loader)", []),
        ("    train_one_epoch(model, opt, loader)", []),
        ("    if warm:\n        warm_up(model, opt, loader)", ["LF005"]),
        ("    pass", ["LF005"]),
        ("    o = opt\n" + WARM_UP_THROUGH.format(name="o"), []),
        (
            "    o = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            + WARM_UP_THROUGH.format(name="o"),
            ["LF005"],
        ),
        (WARM_UP_WHILE.format(warm="2"), []),
        (WARM_UP_WHILE.format(warm="0"), ["LF005"]),
        (WARM_UP_WHILE.format(warm="warm"), ["LF005"]),
        (
            WARM_UP_WHILE.format(warm="2").replace(
                "        x, y = next(it)\n",
                "        x, y = next(it)\n        if n == 0:\n            break\n",
            ),
            ["LF005"],
        ),
        ("    warm_up_on(model, opt, loader, 0)", ["LF005"]),
        (WARM_UP_UNTIL, []),
    ],
    ids=[
        "warm-up loop written out",
        "warm-up two calls deep",
        "warm-up epoch by the function each epoch calls",
        "warm-up that may not run",
        "none",
        "warm-up stepping the optimizer through another name",
        "warm-up stepping another optimizer",
        "warm-up while loop that runs",
        "warm-up while loop that does not run",
        "warm-up while loop over a setting",
        "warm-up while loop leaving before its step",
        "warm-up function stepping over a part of the batches",
        "warm-up while True left after its step",
    ],
)
def test_a_schedule_stepped_after_a_warm_up_epoch_is_in_order(warm_up, reported, tmp_path):
    """A scheduler stepped at the top of each epoch after a warm-up epoch already stepped
    the optimizer (a loop over the batches written out before the epoch loop, or a function
    that runs an epoch through another) follows an optimizer step: PyTorch does not warn
    that the schedule skipped its first value, also where the warm-up steps it through
    another name (`o = opt`), or in a `while` loop whose test holds when first reached.
    Without the warm-up (or one under a branch that does not run, one stepping another
    optimizer, a `while` loop whose test is false at first or reads a setting) it warns:
    reported."""
    source = WARMED_UP_SCHEDULE.format(warm_up=warm_up)
    done, findings = run_and_analyse(source, tmp_path)
    assert done.returncode == 0, done.stderr
    assert ("before `optimizer.step()`" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported


WARMED_UP_BY_A_TRAINER = """\
import warnings

import torch
import torch.nn as nn

warnings.simplefilter("always")


class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt

    def warmup(self, loader):
        for x, y in loader:
            self.opt.zero_grad()
            nn.functional.mse_loss(self.model(x), y).backward()
            self.opt.step()


def main(warm=False):
    torch.manual_seed(0)
    model = nn.Linear(3, 1)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    loader = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(2)]
{warm_up}
    for epoch in range(3):
        sched.step()
        for x, y in loader:
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()


main()
"""


@pytest.mark.parametrize(
    ("warm_up", "reported"),
    [
        ("    Trainer(model, opt).warmup(loader)", []),
        ("    trainer = Trainer(model, opt)\n    trainer.warmup(loader)", []),
        ("    if warm:\n        Trainer(model, opt).warmup(loader)", ["LF005"]),
        (
            "    other = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "    Trainer(model, other).warmup(loader)",
            ["LF005"],
        ),
    ],
    ids=[
        "object built in the statement",
        "object named",
        "warm-up that may not run",
        "object given another optimizer",
    ],
)
def test_a_warm_up_method_steps_the_optimizer_its_object_was_given(warm_up, reported, tmp_path):
    """`Trainer(model, opt).warmup(loader)`, whose method steps `self.opt` over the batches,
    steps the scope's `opt` (the object keeps what it was given): the scheduler stepped at
    the top of each epoch after it follows an optimizer step, and PyTorch does not warn.
    Under a branch that does not run, or with a trainer given another optimizer, `opt` has
    not stepped: PyTorch warns, and LF005 reports it."""
    source = WARMED_UP_BY_A_TRAINER.format(warm_up=warm_up)
    done, findings = run_and_analyse(source, tmp_path)
    assert done.returncode == 0, done.stderr
    assert ("before `optimizer.step()`" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported


STATE_RESET_UNDER_A_TEST = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 6, batch_first=True)
        self.fc = nn.Linear(6, 1)

    def init_hidden(self, bs):
        return torch.zeros(1, bs, 6)

    def forward(self, x, h):
        out, h = self.rnn(x, h)
        return self.fc(out[:, -1]), h


def main(reset=False):
    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    bs = 4
    h = model.init_hidden(bs)
    for i in range(12):
        x, y = torch.randn(bs, 5, 3), torch.randn(bs, 1)
        if {test}:
            h = model.init_hidden(bs)
        out, h = model(x, h)
        loss = ((out - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


main()
"""


@pytest.mark.parametrize(
    ("test", "reported"),
    [
        ("i % 1 == 0", []),
        ("True", []),
        ("reset or True", []),
        ("not False", []),
        ("1 == 1", []),
        ("(fresh := True)", []),
        ("i % 10 == 0", ["LF001"]),
        ("i % 1 != 0", ["LF001"]),
        ("reset and True", ["LF001"]),
        ("False", ["LF001"]),
        ("1 == 2", ["LF001"]),
    ],
)
def test_a_state_reset_under_a_test_that_always_holds_is_fresh(test, reported, tmp_path):
    """A hidden state re-created under a test that holds in every iteration (a modulus of
    1, a literal, an `or` with a literal true) is fresh each batch: the loop runs. Under a
    test that can be false (every tenth batch, a setting that is off) the next batch's
    backward goes through the previous one's freed graph: reported."""
    source = STATE_RESET_UNDER_A_TEST.format(test=test)
    done, findings = run_and_analyse(source, tmp_path)
    assert ("a second time" in done.stderr) is bool(reported), done.stderr
    assert done.returncode == (1 if reported else 0), done.stderr
    assert [f.rule for f in findings] == reported


STATE_RESET_THROUGH_A_HELPER = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(3, 6, batch_first=True)
        self.fc = nn.Linear(6, 1)
        self.h = None

    def reset(self, batch):
        self.h = torch.zeros(1, batch, 6)

    def forward(self, x):
        out, self.h = self.rnn(x, self.h)
        return self.fc(out[:, -1])


def reset_state(m, batch):
{helper_body}


model = Net()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for i in range(3):
    x, y = torch.randn(4, 5, 3), torch.randn(4, 1)
    reset_state(model, 4)
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize(
    ("helper_body", "reported"),
    [("    m.reset(batch)", []), ("    pass", ["LF001"])],
    ids=["helper calls the reset method", "helper resets nothing"],
)
def test_a_state_reset_by_a_method_a_helper_calls_is_fresh(helper_body, reported, tmp_path):
    """`reset_state(model, 4)`, whose body calls `m.reset(batch)`, which sets `self.h` to
    zeros: the method's `self` is the caller's `model` (not the helper's local name for it),
    so each batch starts from a fresh state and the loop runs. A helper that resets nothing
    leaves the state from the previous batch: its backward goes through a freed graph."""
    source = STATE_RESET_THROUGH_A_HELPER.format(helper_body=helper_body)
    done, findings = run_and_analyse(source, tmp_path)
    assert ("a second time" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported


GRADIENTS_CLEARED_BY_A_CALLBACK = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class ZeroGradCallback:
    def __init__(self, model):
        self.model = model

    def on_batch_start(self):
        self.model.zero_grad(set_to_none=True)


class Loop:
    def __init__(self, model, opt, callbacks):
        self.model, self.opt, self.callbacks = model, opt, callbacks

    def fire(self, name):
        for cb in self.callbacks:
            getattr(cb, name)()

    def run(self, n):
        for i in range(n):
            x, y = torch.randn(5, 4), torch.randn(5, 1)
{clear}
            print(self.model.weight.grad is None)
            loss = ((self.model(x) - y) ** 2).mean()
            loss.backward()
            self.opt.step()


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
Loop(model, opt, [ZeroGradCallback(model)]).run(3)
"""


@pytest.mark.parametrize(
    ("clear", "reported"),
    [('            self.fire("on_batch_start")', []), ("            pass", ["LF007"])],
    ids=["a callback called by name", "nothing"],
)
def test_gradients_a_callback_called_by_name_may_clear_are_not_said_to_pile_up(
    clear, reported, tmp_path
):
    """`getattr(cb, name)()` over a callback list runs methods loopfix cannot name; one of
    them clears the gradients (the program prints that each batch starts with none), so the
    loop is not said to pile them up. Without it they do: reported."""
    source = GRADIENTS_CLEARED_BY_A_CALLBACK.format(clear=clear)
    done, findings = run_and_analyse(source, tmp_path)
    cleared = done.stdout.split()
    assert cleared and all(c == "True" for c in cleared) is (not reported), done.stdout
    assert [f.rule for f in findings] == reported


RETAIN_FROM_A_PARAMETER = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
enc = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
ha, hb = nn.Linear(8, 1), nn.Linear(8, 1)
opt = torch.optim.SGD([*enc.parameters(), *ha.parameters(), *hb.parameters()], lr=0.1)


def backprop(loss, keep=False):
    loss.backward(retain_graph=keep)


for i in range(3):
    z = enc(torch.randn(5, 4))
    la = ((ha(z) - 1) ** 2).mean()
    lb = ((hb(z) + 1) ** 2).mean()
    opt.zero_grad()
    backprop(la{first})
    backprop(lb)
    opt.step()
"""


@pytest.mark.parametrize(
    ("first", "reported"),
    [("", ["LF003"]), (", keep=True", []), (", True", []), (', **{"keep": True}', [])],
    ids=["default False", "keep=True", "True by position", "True through **kwargs"],
)
def test_retain_graph_from_a_helper_parameter_is_what_the_call_passes(first, reported, tmp_path):
    """`backprop(loss, keep=False)` runs `loss.backward(retain_graph=keep)`: called twice
    on losses sharing an encoder with the default, the second backward goes through the
    freed graph (reported, without a fix: the call should pass True, and a rewrite of the
    helper would ignore what its callers pass). Called with `keep=True` (or True by
    position, or through `**kwargs`) first, the loop runs."""
    source = RETAIN_FROM_A_PARAMETER.format(first=first)
    done, findings = run_and_analyse(source, tmp_path)
    assert ("a second time" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported
    assert all(f.fix is None and "`keep`" in f.fix_unavailable for f in findings)


def test_a_backward_in_a_method_called_inside_print_is_named_by_the_method(tmp_path):
    """`print(i, agent.update_actor(h, a, adv))` after `agent.update_critic(h, ret)` stepped
    the shared trunk: the finding at that line names the method that runs the backward,
    not the `print` around it."""
    from loopfix.project import project_for

    (tmp_path / "agent.py").write_text(
        textwrap.dedent(
            """
            import torch

            class Agent:
                def __init__(self, trunk, pi, vf, opt_a, opt_c):
                    self.trunk, self.pi, self.vf = trunk, pi, vf
                    self.opt_a, self.opt_c = opt_a, opt_c

                def update_critic(self, h, ret):
                    loss = ((self.vf(h) - ret) ** 2).mean()
                    self.opt_c.zero_grad()
                    loss.backward(retain_graph=True)
                    self.opt_c.step()

                def update_actor(self, h, a, adv):
                    logp = torch.log_softmax(self.pi(h), -1).gather(1, a)
                    loss = -(logp * adv).mean()
                    self.opt_a.zero_grad()
                    loss.backward()
                    self.opt_a.step()
                    return loss.item()
            """
        )
    )
    main = tmp_path / "main.py"
    main.write_text(
        textwrap.dedent(
            """
            import torch
            import torch.nn as nn
            from agent import Agent

            trunk = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 16))
            pi, vf = nn.Linear(16, 2), nn.Linear(16, 1)
            opt_a = torch.optim.Adam([*trunk.parameters(), *pi.parameters()], 1e-3)
            opt_c = torch.optim.Adam([*trunk.parameters(), *vf.parameters()], 1e-3)
            agent = Agent(trunk, pi, vf, opt_a, opt_c)
            for i in range(3):
                s, a, ret = torch.randn(6, 4), torch.randint(0, 2, (6, 1)), torch.randn(6, 1)
                h = agent.trunk(s)
                agent.update_critic(h, ret)
                print(i, agent.update_actor(h, a, torch.randn(6, 1)))
            """
        )
    )
    from scripts import run_script

    assert "modified by an inplace operation" in run_script(main.read_text(), tmp_path).stderr
    (finding,) = analyse_source(SourceFile.read(main), project=project_for(main)).findings
    assert finding.rule == "LF002"
    assert finding.message.startswith("the backward inside `agent.update_actor`")


STEP_IN_A_CALLED_FUNCTION = """\
import torch
import torch.nn as nn

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, opt):
        self.model, self.opt = model, opt

    def backward(self, x, y):
        loss = ((self.model(x) - y) ** 2).mean()
        loss.backward()

    def update(self):
        self.opt.step()
{clear}


def train_step(model, opt, x, y):
{zero}
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()


model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
tr = Trainer(model, opt)
for i in range(3):
    x, y = torch.randn(5, 4), torch.randn(5, 1)
    expected = torch.autograd.grad(((model(x) - y) ** 2).mean(), model.weight)[0]
{body}
    print(torch.allclose(model.weight.grad, expected))
"""
TRAINER_STEPS = "    tr.backward(x, y)\n    tr.update()"
CLEAR_METHODS = """
    def clear(self):
        self.reset()

    def reset(self):
        self.opt.zero_grad()
"""


@pytest.mark.parametrize(
    ("zero", "body", "reported"),
    [
        ("    pass", "    train_step(model, opt, x, y)", ["LF007"]),
        ("    opt.zero_grad()", "    train_step(model, opt, x, y)", []),
        ("    pass", TRAINER_STEPS, ["LF007"]),
        ("    pass", "    tr.clear()\n" + TRAINER_STEPS, []),
    ],
    ids=["function, never cleared", "function clears", "methods, never cleared", "method clears"],
)
def test_a_step_in_a_called_function_whose_gradients_nothing_clears(zero, body, reported, tmp_path):
    """A loop whose called function (or trainer methods) runs the backward and the step:
    when nothing the loop runs clears the gradients, each step uses the sum of every batch's
    gradient so far (the program compares the gradient each step sees with its batch's own):
    reported, and the fix clears the optimizer's gradients before the backward. A
    `zero_grad()` in the function, or two calls deep in a method, clears them. (A module
    that names `zero_grad` anywhere is not reported at all: it may clear them where the
    calls are not followed.)"""
    from scripts import run_script

    clear = CLEAR_METHODS if "tr.clear()" in body else ""
    source = STEP_IN_A_CALLED_FUNCTION.format(zero=zero, body=body, clear=clear)
    done = run_script(source, tmp_path)
    own = done.stdout.split()
    assert len(own) == 3 and all(o == "True" for o in own) is (not reported), done.stdout
    result = analyse_source(SourceFile.from_text("train.py", source), project=None)
    assert [f.rule for f in result.findings] == reported
    if reported:
        fixed = run_script(result.fixed_text, tmp_path).stdout.split()
        assert fixed == ["True"] * 3, result.fixed_text


CHANGED_UNDER_NO_GRAD = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(4, 3)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for i in range(3):
    x, y = torch.randn(5, 4), torch.randint(0, 3, (5,))
    probs = torch.softmax(model(x), -1)
{before}
    loss = -torch.log(probs.gather(1, y[:, None])).mean()
    opt.zero_grad()
    loss.backward()
{after}
    opt.step()
"""
CLAMP = "    with torch.no_grad():\n        {target}.clamp_(min=1e-4)"


@pytest.mark.parametrize(
    ("before", "after", "reported"),
    [
        (CLAMP.format(target="probs"), "", ["LF008"]),
        ("    shown = probs.clone()\n" + CLAMP.format(target="shown"), "", []),
        ("", CLAMP.format(target="probs"), []),
    ],
    ids=["saved result, before the backward", "a clone", "after the backward"],
)
def test_an_in_place_change_under_no_grad_still_changes_a_saved_tensor(
    before, after, reported, tmp_path
):
    """`with torch.no_grad(): probs.clamp_(min=1e-4)` after `softmax` kept `probs`: grad
    mode off does not stop the version counter, so the backward fails (reported, without a
    fix: out of place under `no_grad` the probabilities would carry no gradient). A clone,
    or the same change after the backward, is fine."""
    source = CHANGED_UNDER_NO_GRAD.format(before=before, after=after)
    done, findings = run_and_analyse(source, tmp_path)
    assert ("modified by an inplace operation" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported
    assert all(f.fix is None and "torch.no_grad()" in f.fix_unavailable for f in findings)


LOSSES_FROM_FUNCTIONS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


def d_loss(D, real, fake):
    return F.softplus(-D(real)).mean() + F.softplus(D(fake)).mean()


def g_loss(D, fake):
    return F.softplus(-D(fake)).mean()


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
D = nn.Sequential(nn.Linear(3, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
opt_g = torch.optim.SGD(G.parameters(), lr=0.1)
opt_d = torch.optim.SGD(D.parameters(), lr=0.1)
for i in range(3):
    opt_d.zero_grad()
    opt_g.zero_grad()
    real = torch.randn(4, 3)
    fake = G(torch.randn(4, 2))
    ld = d_loss(D, real, {fake})
    ld.backward({retain})
    opt_d.step()
    lg = g_loss(D, fake)
    lg.backward()
    opt_g.step()
print(G[0].weight.sum().item())
"""


@pytest.mark.parametrize(
    ("fake", "reported"),
    [("fake", ["LF009"]), ("fake.detach()", [])],
    ids=["fake handed over", "fake detached"],
)
def test_a_loss_from_a_function_given_the_network_is_read_through(fake, reported, tmp_path):
    """`ld = d_loss(D, real, fake)` whose body is `softplus(D(real)) + softplus(D(fake))`:
    the discriminator's loss reaches the generator only behind D's input, so the
    generator's step uses its gradient too (the generator trains to other weights than
    with `fake.detach()` handed over): a leak, reported, as when the loss is written
    inline. With the fake detached (and no graph kept), nothing leaks."""
    from scripts import run_script

    retain = "" if "detach" in fake else "retain_graph=True"
    source = LOSSES_FROM_FUNCTIONS.format(fake=fake, retain=retain)
    detached = run_script(LOSSES_FROM_FUNCTIONS.format(fake="fake.detach()", retain=""), tmp_path)
    done = run_script(source, tmp_path)
    assert (done.stdout != detached.stdout) is bool(reported), done.stdout
    findings = analyse_source(SourceFile.from_text("gan.py", source), project=None).findings
    assert [f.rule for f in findings] == reported


CALLED_STEPS_CLEARED_UNSEEN = """\
import torch
import torch.nn as nn


def train_step(model, opt, x, y):
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
data = [(torch.randn(4, 3), torch.randn(4, 1)) for _ in range(4)]
{setup}
for {target} in {batches}:
{body}
"""


@pytest.mark.parametrize(
    ("setup", "target", "batches", "body"),
    [
        ("clear = opt.zero_grad", "x, y", "data", "    clear()\n    train_step(model, opt, x, y)"),
        ("", "x, y", "data", '    getattr(opt, "zero_grad")()\n    train_step(model, opt, x, y)'),
        (
            "",
            "x, y",
            "data",
            "    model = nn.Linear(3, 1)\n"
            "    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n"
            "    train_step(model, opt, x, y)",
        ),
    ],
    ids=["a stored bound method", "getattr by a constant", "made again each batch"],
)
def test_called_steps_whose_gradients_are_cleared_where_calls_are_not_followed(
    setup, target, batches, body
):
    """Correct loops around a `train_step` that steps without clearing: the gradients are
    cleared through a name bound to `opt.zero_grad`, by `getattr`, or start afresh with an
    optimizer made in the loop. Not reported."""
    source = CALLED_STEPS_CLEARED_UNSEEN.format(
        setup=setup, target=target, batches=batches, body=body
    )
    findings = analyse_source(SourceFile.from_text("train.py", source), project=None).findings
    assert findings == []


def test_several_steps_in_one_statement_get_no_zero_grad_before_it():
    """`losses = [train_step(model, opt, x, y) for x, y in chunk]` steps several times in one
    statement: a `zero_grad()` before it would clear only the first step's gradients (the
    verification of that fix found the rest piled up). Not reported."""
    source = CALLED_STEPS_CLEARED_UNSEEN.format(
        setup="chunks = [data[:2], data[2:]]",
        target="chunk",
        batches="chunks",
        body="    losses = [train_step(model, opt, x, y) for x, y in chunk]",
    )
    findings = analyse_source(SourceFile.from_text("train.py", source), project=None).findings
    assert findings == []


ATTACK_ON_CHOSEN_CLASS = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
teacher = nn.Linear(4, 3)


def attack(model, img, target, weight, steps=3):
    img = img.detach().requires_grad_(True)
    for _ in range(steps):
        if img.grad is not None:
            img.grad.zero_()
        score = F.softmax(model(img), dim=1)
        loss = (score.gather(1, target.unsqueeze(1)) * weight).sum()
        loss.backward()
        img.data = img.data + 0.1 * img.grad.sign()
    return img.detach()


x = torch.randn(5, 4)
out_t = teacher(x)
{chosen}
adv = attack(teacher, x, target, {weight})
print(adv.shape)
"""


# a class of the project whose `topk` is no tensor method: its result's items carry graphs
RANKER = """class Ranker:
    def topk(self, scores):
        return scores * 2


ranker = Ranker()
"""


@pytest.mark.parametrize(
    ("chosen", "weight", "reported"),
    [
        ("target = out_t.sort(dim=1, descending=True)[1][:, 1]", "1.0", False),
        ("_, target = out_t.max(1)", "1.0", False),
        ("target = torch.topk(out_t, 2)[1][:, 1]", "1.0", False),
        ("target = torch.max(out_t, dim=1)[1]", "1.0", False),
        ("target = out_t.argsort(dim=1)[:, -1]", "1.0", False),
        ("target = out_t.max(1).indices", "1.0", False),
        ("target = out_t.max(1)[-1]", "1.0", False),
        ("top, target = out_t.max(1)", "top.unsqueeze(1)", True),
        ("target = out_t.argmax(1)", "out_t.sort(dim=1)[0][:, :1]", True),
        ("target = out_t.argmax(1)", "out_t.max(1).values.unsqueeze(1)", True),
        (RANKER + "target = out_t.argmax(1)", "ranker.topk(out_t)[1]", True),
    ],
    ids=["sort indices", "max indices unpacked", "topk indices", "torch.max indices",
         "argsort", "indices attribute", "last item", "max values", "sorted values",
         "values attribute", "a project method named topk"],
)  # fmt: skip
def test_indices_of_a_sort_or_max_carry_no_graph(chosen, weight, reported, tmp_path):
    """An attack whose class is chosen from another pass's outputs (`out_t.sort(...)[1]`,
    `_, c = out_t.max(1)`): the indices are integers without a graph, so each step's
    backward frees only its own graph. Its twin, weighting the loss by the sorted values,
    goes through the teacher's graph at every step and fails the second. Each program is
    run: only the twins raise, and only they are reported (LF003)."""
    source = ATTACK_ON_CHOSEN_CLASS.format(chosen=chosen, weight=weight)
    run, findings = run_and_analyse(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is reported
    assert [f.rule for f in findings] == (["LF003"] if reported else [])


GENERATED_IMAGE = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU())
target = features(torch.randn(1, 3, 6, 6))  # kept with its graph: hence retain_graph


class GeneratedImage(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(*shape))

    def forward(self):
        return {returned}


image = GeneratedImage((1, 3, 6, 6))
{setup}
optimizer = torch.optim.Adam(image.parameters(), lr=0.01)
X = image()
for step in range(3):
    loss = ((features(X) - target) ** 2).mean()
    optimizer.zero_grad()
    loss.backward({retain})
    optimizer.step()
"""


@pytest.mark.parametrize(
    ("returned", "setup", "retain", "reported"),
    [
        ("self.weight", "", "retain_graph=True", False),
        ("self.weight", "target = target.detach()", "", False),
        ("self.weight ** 2", "", "retain_graph=True", True),
        (
            "self.weight",
            "image.register_forward_hook(lambda m, inputs, out: out.sigmoid() * out)",
            "retain_graph=True",
            True,
        ),
    ],
    ids=["the parameter", "no retain needed", "its square", "a forward hook"],
)
def test_a_module_that_is_its_parameter_keeps_nothing(returned, setup, retain, reported, tmp_path):
    """Neural style transfer's generated image: a module whose forward returns its own
    parameter (`return self.weight`), called once before the loop, and a target whose graph
    every backward goes through (hence `retain_graph=True`). The call's result is that leaf;
    each step's forward keeps it afresh, so stepping it breaks no graph (the run passes
    and nothing is reported). Squared in the forward, the call keeps the weight, which the
    step changes: the second backward fails, and LF002 reports it; so it does with a forward
    hook computing on the parameter. With the target detached, no backward needs a graph
    kept, and none is freed twice (the parameter keeps nothing to free)."""
    source = GENERATED_IMAGE.format(returned=returned, setup=setup, retain=retain)
    run, findings = run_and_analyse(source, tmp_path)
    assert ("modified by an inplace operation" in run.stderr) is reported
    assert [f.rule for f in findings] == (["LF002"] if reported else [])


STATE_KEPT_BY_A_MODEL_METHOD = """\
import torch
import torch.nn as nn


class Model(nn.Module):
    \"\"\"A recurrent model that keeps its state between updates (its own module, longer than
    the training script: the backward's `retain_graph=True` lies past the script's end).\"\"\"

    def __init__(self):
        super().__init__()
        self.rnn = nn.GRUCell(3, 4)
        self.head = nn.Linear(4, 1)
        self.opt = torch.optim.SGD(self.parameters(), lr=0.1)
        self.h = torch.zeros(2, 4)

    def update(self, x, y):
        self.h = self.rnn(x, self.h)
        loss = ((self.head(self.h) - y) ** 2).mean()
        self.opt.zero_grad()
        # keep the graph: the state is used by the next update
        loss.backward(retain_graph=True)
        self.opt.step()
        return loss.item()
"""


def test_a_finding_whose_backward_is_in_another_module_plans_no_edit_there(tmp_path):
    """The training script's loop calls `model.update(...)`, whose state `self.h` is carried
    into the next update's backward (which fails: `retain_graph=True` only delays it).
    Planning LF001's fix looked at removing that `retain_graph=True` with the script's own
    text, where the line does not exist, and failed with an internal error that dropped the
    finding. The finding is reported; no edit reaches the other module."""
    from scripts import run_script

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "model.py").write_text(STATE_KEPT_BY_A_MODEL_METHOD)
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n\nfrom model import Model\n\nmodel = Model()\nfor step in range(3):\n"
        "    model.update(torch.randn(2, 3), torch.randn(2, 1))\n"
    )
    run = run_script(script.read_text(), tmp_path)
    assert "modified by an inplace operation" in run.stderr
    result = analyse_source(SourceFile.read(script))
    assert result.errors == []
    assert [f.rule for f in result.findings] == ["LF001"]
    assert "retain_graph=True" not in result.fixed_text  # the script never said it


# a module loopfix does not follow (the tests analyse `train.py` alone): a checkpoint loader
# that hands back what it is given, a model factory, and a recurrent step
UNFOLLOWED_MODULE = """\
import torch
import torch.nn as nn

cell = nn.Linear(4, 4)


def load(model, optimizer):
    return model, optimizer, 1


class Net(nn.Linear):
    def compute_loss(self, x):
        return self(x).pow(2).mean()


def get_model():
    return Net(4, 4)


def step(x, h):
    h = torch.tanh(cell(x) + h)
    return h, h
"""

HANDED_BACK = """\
import torch
import torch.nn as nn

import checkpoint


def train(model, optimizer):
    h = torch.zeros(2, 4)
    for it in range(3):
        x = torch.randn(2, 4)
        {call}
        optimizer.zero_grad()
        out.mean().backward()
        optimizer.step()


def main():
    torch.manual_seed(0)
    {model}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    {assign}
    train(model, optimizer)


main()
"""


@pytest.mark.parametrize(
    ("model", "assign", "call", "reported"),
    [
        ("model = nn.Linear(4, 4)", "model, optimizer, epoch = checkpoint.load(model, optimizer)",
         "out = model(x)", []),
        ("model = checkpoint.get_model()",
         "model, optimizer, epoch = checkpoint.load(model, optimizer)",
         "out = model.compute_loss(x)", []),
        ("model = nn.Linear(4, 4)", "", "out, h = checkpoint.step(model(x), h)", ["LF001"]),
    ],
    ids=["module handed back", "factory model handed back", "recurrent step"],
)  # fmt: skip
def test_objects_a_function_hands_back_in_place_are_the_objects_it_was_given(
    model, assign, call, reported, tmp_path
):
    """`model, optimizer, epoch = checkpoint.load(model, optimizer)` from a module loopfix
    does not follow hands back the objects it was given (the loop's graphs are its own each
    batch); `out, h = step(x, h)` of such a module is a recurrent step whose state carries
    its graph into the next batch, and the program fails as reported."""
    (tmp_path / "checkpoint.py").write_text(UNFOLLOWED_MODULE)
    source = HANDED_BACK.format(model=model, assign=assign, call=call)
    done, findings = run_and_analyse(source, tmp_path)
    assert ("a second time" in done.stderr) is bool(reported), done.stderr
    assert [f.rule for f in findings] == reported


EVALUATION_UNDER_A_CONTEXT = """\
import contextlib

import torch
import torch.nn as nn

torch.manual_seed(0)
model = nn.Linear(3, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
training = False


@contextlib.contextmanager
def evaluating(net):
    net.eval()
    with torch.no_grad():
        yield
    net.train()


def evaluate():
    total = 0.0
    for it in range(3):
        total += nn.functional.mse_loss(model(torch.randn(4, 3)), torch.randn(4, 1))
    print(total.requires_grad)


for epoch in range(2):
    for it in range(2):
        loss = nn.functional.mse_loss(model(torch.randn(4, 3)), torch.randn(4, 1))
        opt.zero_grad()
        loss.backward()
        opt.step()
{call}
"""


@pytest.mark.parametrize(
    ("call", "reported"),
    [
        ("    with evaluating(model):\n        evaluate()", []),
        ("    with torch.set_grad_enabled(training):\n        evaluate()", []),
        ("    with contextlib.ExitStack() as stack:\n"
         "        stack.enter_context(torch.no_grad())\n        evaluate()", []),
        ("    evaluate()", ["LF006"]),
    ],
    ids=["project context manager", "mode in a variable", "exit stack", "plain call"],
)  # fmt: skip
def test_an_evaluation_helper_under_a_context_that_may_switch_grad_off_is_not_followed(
    call, reported, tmp_path
):
    """`evaluate()` has no backward of its own: its loop is analysed only where the training
    code is known to call it with grad enabled. Under a context the model cannot see into
    (a project `@contextmanager` entering `torch.no_grad()`, `set_grad_enabled` given a
    variable, an `ExitStack`) the program prints that its total holds no graph."""
    source = EVALUATION_UNDER_A_CONTEXT.format(call=call)
    done, findings = run_and_analyse(source, tmp_path)
    assert done.stdout.split() == [str(bool(reported))] * 2, done.stderr
    assert [f.rule for f in findings] == reported


METER = """\
import torch
import torch.nn as nn


class AverageMeter:
    def __init__(self):
        self.sum, self.count = 0.0, 0

    def update(self, val, n=1):
        {convert}
        self.sum += val * n
        self.count += n


torch.manual_seed(0)
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
losses = AverageMeter()
for step in range(4):
    x, y = torch.randn(8, 4), torch.randn(8, 1)
    loss = (model(x) - y).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.update(loss, x.size(0))
print("average", losses.sum / losses.count)
"""


@pytest.mark.parametrize(
    ("convert", "keeps"),
    [
        ("if torch.is_tensor(val):\n            val = val.detach()", False),
        ("if isinstance(val, torch.Tensor):\n            val = val.item()", False),
        ("if not torch.is_tensor(val):\n            val = float(val)", True),
        ("pass", True),
    ],
    ids=["is_tensor_detach", "isinstance_item", "converts_only_non_tensors", "adds_as_given"],
)
def test_a_meter_that_detaches_what_it_is_given_keeps_no_graph(convert, keeps, tmp_path):
    """A value the model cannot tell is a tensor (a meter's `val`) is one on the branch
    where a type test says so, and holds no graph on the other."""
    source = METER.format(convert=convert)
    # the run also says whether the total holds a graph (a line the analysis does not see)
    probe = 'print("keeps graph", getattr(losses.sum, "requires_grad", False))\n'
    run = run_script(source + probe, tmp_path)
    assert f"keeps graph {keeps}" in run.stdout, run.stderr
    assert rules_reported(source) == (["LF006"] if keeps else [])


STEP_METHOD = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.model = nn.Linear(4, 1)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.1)
        self.total = 0.0

    def step(self, x, y):
        loss = (self.model(x) - y).pow(2).mean()
        self.optimizer.zero_grad()
        loss.backward({retain})
        self.optimizer.step()
        self.total += {added}

    def train(self, n):
        for i in range(n):
            {reset}self.step(torch.randn(8, 4), torch.randn(8, 1))
        {after}


torch.manual_seed(0)
trainer = Trainer()
trainer.train(4)
"""

LOGGED = 'print(f"mean {float(self.total) / n:.4f}")'


@pytest.mark.parametrize(
    ("retain", "added", "reset", "after", "rules"),
    [
        ("", "loss", "", LOGGED, ["LF006"]),
        ("", "loss.item()", "", LOGGED, []),  # a number: no graph
        ("", "loss", "self.total = 0.0\n            ", LOGGED, []),  # reset every step
        ("", "loss", "", "return self.total", []),  # handed to the caller: may be used
        # its graph kept: a later backward through the total is the author's to make
        ("retain_graph=True", "loss", "", LOGGED, []),
    ],
    ids=["logged", "item", "reset_each_step", "returned", "graph_retained"],
)
def test_a_total_on_self_added_in_a_step_method_the_loop_calls(
    retain, added, reset, after, rules, tmp_path
):
    """`self.total += loss` in `step`, which `train`'s loop calls on the same object after
    `loss.backward()`: the total keeps every step's graph (LF006) where it is only logged."""
    source = STEP_METHOD.format(retain=retain, added=added, reset=reset, after=after)
    probe = 'print("keeps graph", getattr(trainer.total, "requires_grad", False))\n'
    run = run_script(source + probe, tmp_path)
    assert run.returncode == 0, run.stderr
    assert f"keeps graph {added == 'loss'}" in run.stdout  # (one step's, when reset)
    assert rules_reported(source) == rules
