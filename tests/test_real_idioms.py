"""Idioms of real training code that cannot run here (their frameworks are not installed, or
PyTorch no longer accepts them): what loopfix reports on each, statically."""

from __future__ import annotations

import json
import textwrap

import pytest
from typer.testing import CliRunner

from loopfix.analysis import analyse_source
from loopfix.cli import app
from loopfix.source import SourceFile


def analyse(text: str):
    return analyse_source(SourceFile.from_bytes("train.py", textwrap.dedent(text).encode()))


ACCELERATE_LM = """
    import torch
    from torch import nn
    from accelerate import Accelerator

    accelerator = Accelerator()
    rnn, head = nn.GRU(3, 6), nn.Linear(6, 1)
    optimizer = torch.optim.AdamW([*rnn.parameters(), *head.parameters()])
    rnn, head, optimizer = accelerator.prepare(rnn, head, optimizer)
    hidden = torch.zeros(1, 2, 6)
    for batch in range(5):
        out, hidden = rnn(torch.randn(4, 2, 3), hidden)
        loss = head(out).mean()
        optimizer.zero_grad()
        accelerator.backward(loss)
        optimizer.step()
"""


def test_accelerate_backward_is_the_backward_of_its_argument():
    result = analyse(ACCELERATE_LM)
    assert [(f.rule, f.fixable) for f in result.findings] == [("LF001", True)]
    assert "hidden = hidden.detach()" in result.fixed_text


DEEPSPEED_GAN = """
    import torch
    from torch import nn

    gen, disc = nn.Linear(4, 4), nn.Linear(4, 1)
    opt_g = torch.optim.Adam(gen.parameters())
    opt_d = torch.optim.Adam(disc.parameters())
    for step in range(3):
        fake = gen(torch.randn(8, 4))
        d_out = disc(fake).mean()
        opt_d.zero_grad()
        engine.backward(d_out, retain_graph=True)
        opt_d.step()
        opt_g.zero_grad()
        engine.backward(-d_out)
        opt_g.step()
"""


def test_a_framework_backward_is_reordered_keeping_the_framework_call():
    result = analyse(DEEPSPEED_GAN)
    assert [(f.rule, f.fixable) for f in result.findings] == [("LF002", True)]
    assert "engine.backward(-d_out, inputs=list(gen.parameters()))" in result.fixed_text
    assert ".backward(" not in result.fixed_text.replace("engine.backward(", "")


RETAIN_VARIABLES = """
    import torch
    from torch import nn

    trunk, head = nn.Linear(4, 4), nn.Linear(4, 1)
    opt = torch.optim.SGD([*trunk.parameters(), *head.parameters()], lr=0.1)
    for step in range(3):
        z = head(torch.tanh(trunk(torch.randn(8, 4))))
        opt.zero_grad()
        z.pow(2).mean().backward(retain_variables=True)
        z.abs().mean().backward({second})
        opt.step()
"""


def test_retain_variables_is_the_old_spelling_of_retain_graph():
    needed = analyse(RETAIN_VARIABLES.format(second=""))
    assert needed.findings == []  # before PyTorch 0.4 this kept the graph for the second
    needless = analyse(RETAIN_VARIABLES.format(second="retain_variables=True"))
    assert [f.rule for f in needless.findings] == ["LF004"]
    assert needless.findings[0].message.startswith("retain_variables=True keeps")


def test_a_finding_without_a_fix_says_why_in_text_and_json(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(
        textwrap.dedent("""
            import torch
            from torch import nn

            net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
            opt = torch.optim.Adam(net.parameters())
            for i in range(3):
                opt.zero_grad()
                out = net(torch.randn(8, 4))
                out.pow(2).mean().backward(retain_graph=True)
                for _ in range(2):
                    opt.step()
                out.abs().mean().backward()
        """)
    )
    runner = CliRunner()
    text = runner.invoke(app, ["check", "--no-cache", str(path)])
    assert "(no automatic fix: `opt` steps inside the `for` on line 11 without a zero_grad()" in (
        text.output
    )
    rows = json.loads(
        runner.invoke(app, ["check", "--no-cache", "--format", "json", str(path)]).stdout
    )
    assert [r["fixable"] for r in rows] == [False]
    assert rows[0]["fix_unavailable"].startswith("`opt` steps inside the `for` on line 11")


def test_a_fixable_finding_has_no_reason_against_a_fix(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(textwrap.dedent(ACCELERATE_LM))
    rows = json.loads(
        CliRunner().invoke(app, ["check", "--no-cache", "--format", "json", str(path)]).stdout
    )
    assert [(r["rule"], r["fixable"], r["fix_unavailable"]) for r in rows] == [
        ("LF001", True, None)
    ]


SELF_FROZEN_ENCODER = """
    import torch
    import torch.nn as nn

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(4, 8)
            self.requires_grad_(False)

        def forward(self, x, state):
            return self.lstm(x, state)

    encoder, head = Encoder(), nn.Linear(8, 2)
    {thaw}
    opt = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=0.1)
    state = (torch.zeros(1, 3, 8), torch.zeros(1, 3, 8))
    for step in range(4):
        feats, state = encoder(torch.randn(5, 3, 4), state)
        loss = head(feats).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
"""


def test_a_class_that_freezes_itself_builds_no_graph_unless_something_is_thawed():
    assert analyse(SELF_FROZEN_ENCODER.format(thaw="")).findings == []
    thawed = analyse(SELF_FROZEN_ENCODER.format(thaw="encoder.lstm.requires_grad_(True)"))
    assert [f.rule for f in thawed.findings] == ["LF001"]


WRAPPER_OF_A_BUILT_BODY = """
    import torch
    import torch.nn as nn
    from registry import build_body


    class Wrapper(nn.Module):
        def __init__(self, cfg):
            super().__init__()
            self.body = build_body(cfg)

        def forward(self, x):
            return self.body(x)


    G, D = Wrapper("g"), Wrapper("d")
    opt_g = torch.optim.Adam(G.parameters())
    opt_d = torch.optim.Adam(D.parameters())
    for i in range(3):
        d_fake = D(G(torch.randn(4, 3)))
        opt_d.zero_grad()
        d_fake.mean().backward(retain_graph=True)
        opt_d.step()
        opt_g.zero_grad()
        (-d_fake.mean()).backward()
        opt_g.step()
"""


def test_a_module_whose_forward_calls_what_it_holds_builds_graph_even_when_unresolved():
    """Only a forward that reads nothing of `self` (a pass-through body) builds no graph of
    its module's own: a wrapper around a body built by a registry still holds D's weights."""
    result = analyse(WRAPPER_OF_A_BUILT_BODY)
    assert [f.rule for f in result.findings] == ["LF002"]


PASS_THROUGH_VARIANTS = {
    "global_parameter": "W = nn.Parameter(torch.randn(3, 3))\n"
    "class Body(nn.Module):\n    def forward(self, x):\n        return F.linear(x, W)\n",
    "call_overridden": "class Body(nn.Module):\n    def __init__(self):\n"
    "        super().__init__()\n        self.lin = nn.Linear(3, 3)\n"
    "    def forward(self, x):\n        return x\n"
    "    def __call__(self, x):\n        return self.lin(x)\n",
    "imported_module": "from models import encoder\nclass Body(nn.Module):\n"
    "    def forward(self, x):\n        return encoder(x)\n",
    "forward_hook": "glin = nn.Linear(3, 3)\nclass Body(nn.Module):\n    def forward(self, x):\n"
    "        return x\nHOOKED = True\n",
}


HOOK = "body.register_forward_hook(lambda m, i, o: glin(o))\n"


@pytest.mark.parametrize("body", list(PASS_THROUGH_VARIANTS), ids=str)
def test_a_forward_that_reaches_weights_another_way_is_not_a_pass_through(body):
    """A forward reading a global parameter or a module imported from the project, a module
    whose `__call__` is overridden, or a file that registers forward hooks: the call may
    build a graph, so the state carried through it is still found."""
    source = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        + PASS_THROUGH_VARIANTS[body]
        + "body = Body()\n"
        + (
            "body.register_forward_hook(lambda m, i, o: glin(o))\n"
            if body == "forward_hook"
            else ""
        )
        + "net = nn.Linear(3, 3)\noptimizer = torch.optim.SGD(net.parameters(), lr=0.1)\n"
        "h = torch.ones(1, 3)\nfor i in range(3):\n    h = body(h)\n"
        "    loss = (net(torch.randn(1, 3)) + h).sum()\n    optimizer.zero_grad()\n"
        "    loss.backward()\n    optimizer.step()\n"
    )
    result = analyse_source(SourceFile.from_bytes("train.py", source.encode()))
    assert [f.rule for f in result.findings] == ["LF001"]


SETTINGS_BODY = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Sharpen(nn.Module):
    def __init__(self, {parameter}):
        super().__init__()
        self.{attribute} = {attribute}
        self.eps = 1e-6

    def forward(self, x):
        return F.softmax(x / (self.{attribute} + self.eps), dim=1) * self.training


net = nn.Linear(3, 3)
sharpen = Sharpen({argument})
optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
h = torch.ones(1, 3)
for i in range(3):
    h = sharpen(h)
    loss = (net(torch.randn(1, 3)) + h).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
SETTINGS = {  # what `__init__` stores -> whether the carried state holds the module's graph
    "a float setting": ("temperature: float = 0.1", "temperature", "", False),
    "an int default": ("temperature=2", "temperature", "", False),
    "an optional float": ("temperature: Optional[float] = None", "temperature", "0.5", False),
    "a tensor it is given": (
        "temperature=None",
        "temperature",
        "nn.Parameter(torch.ones(1))",
        True,
    ),
    # a literal default, or an annotation, says nothing of what a constructor call passes
    "a parameter for a literal default": (
        "temperature=0.5",
        "temperature",
        "temperature=nn.Parameter(torch.ones(1))",
        True,
    ),
    "a parameter for a float": (
        "temperature: float = 0.5",
        "temperature",
        "nn.Parameter(torch.ones(1))",
        True,
    ),
}


@pytest.mark.parametrize("case", list(SETTINGS), ids=str)
def test_a_forward_reading_only_plain_settings_of_self_builds_no_graph(case):
    """A parameterless module whose forward reads only settings `__init__` stores (numbers,
    flags, `self.training`) holds no weights: what it returns carries no graph of its own
    (PADA's class-weight module). A value passed in with a `None` default may be a tensor
    that requires grad: that module still builds one, and the carried state really fails."""
    parameter, attribute, argument, carries = SETTINGS[case]
    text = SETTINGS_BODY.format(parameter=parameter, attribute=attribute, argument=argument)
    text = "from typing import Optional\n" + text
    try:
        exec(compile(text, "<settings>", "exec"), {"__name__": "settings"})  # noqa: S102
        failed = False
    except RuntimeError as error:
        failed = "backward through the graph a second time" in str(error)
    assert failed is carries, "the table disagrees with torch"
    result = analyse_source(SourceFile.from_bytes("train.py", text.encode()))
    assert [f.rule for f in result.findings] == (["LF001"] if carries else [])


TORCHRL_LOSS = """
    import torch
    from torch import nn
    from tensordict import TensorDict


    class TwoLosses(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Linear(4, 4)
            self.actor, self.critic = nn.Linear(4, 1), nn.Linear(4, 1)

        def forward(self, x):
            features = {features}
            return TensorDict(
                source={{
                    "loss_actor": self.actor(features).mean(),
                    "loss_value": self.critic({critic_input}).mean(),
                }},
                batch_size=[],
            )


    loss_module = TwoLosses()
    actor_opt = torch.optim.SGD(loss_module.actor.parameters(), lr=0.1)
    critic_opt = torch.optim.SGD(loss_module.critic.parameters(), lr=0.1)
    for step in range(3):
        losses = loss_module(torch.randn(8, 4))
        losses["loss_actor"].backward()
        actor_opt.step()
        actor_opt.zero_grad()
        losses["loss_value"].backward()
        critic_opt.step()
        critic_opt.zero_grad()
"""


TORCHRL_CASES = pytest.mark.parametrize(
    ("features", "critic_input", "rules"),
    [("x", "x", []), ("self.body(x)", "features", ["LF003"])],
    ids=["separate graphs", "the critic on the actor's features (control)"],
)


@TORCHRL_CASES
def test_a_tensordict_built_from_a_dict_keeps_its_entries_apart(features, critic_input, rules):
    """torchrl's losses return `TensorDict(source={...}, batch_size=[])`: each entry read
    back by its key is the tensor it was given (checked with tensordict 0.15.3, where
    `td["loss_actor"] is loss_actor`), so losses built apart are separate graphs and the
    second backward goes through nothing the first freed; built on shared features, the
    first backward frees them."""
    source = TORCHRL_LOSS.format(features=features, critic_input=critic_input)
    assert [f.rule for f in analyse(source).findings] == rules


@TORCHRL_CASES
def test_the_tensordict_losses_run_as_reported(features, critic_input, rules, tmp_path):
    """The programs above, run where tensordict is installed (it is not a dependency)."""
    pytest.importorskip("tensordict")
    from scripts import run_python

    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(TORCHRL_LOSS.format(features=features, critic_input=critic_input))
    )
    run = run_python([str(script)], tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is bool(rules), run.stderr
