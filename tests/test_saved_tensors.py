"""LF008's facts, checked on torch itself: every entry of the table of saved tensors
(`loopfix/model/saved.py`) is run with a change to the tensor it says is kept and to the one it
says is not; loopfix must report exactly the changes that make the backward fail. Then, over
generated `forward` methods, every reported change really fails, every failing change is
reported, and every fix runs with the gradients of the original run with saved tensors
copied (out-of-place operations throughout)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

HEADER = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.pre = {pre}
        self.layer = {layer}

    def forward(self, x):
        h = self.pre(x)
{body}
"""
LINEAR, CONV = "nn.Linear(8, 8)", "nn.Conv2d(3, 3, 1)"
SHAPES = {LINEAR: (4, 8), CONV: (2, 3, 8, 8)}

# (the operation applied to `h`, the `pre` layer that makes `h`, the `layer` it may call,
# which tensor autograd keeps: "result", "input" or None)
TABLE = [
    ("torch.sigmoid(h)", LINEAR, None, "result"),
    ("torch.tanh(h)", LINEAR, None, "result"),
    ("torch.exp(h)", LINEAR, None, "result"),
    ("torch.relu(h)", LINEAR, None, "result"),
    ("torch.sqrt(h)", LINEAR, None, "result"),
    ("torch.rsqrt(h)", LINEAR, None, "result"),
    ("torch.softmax(h, 1)", LINEAR, None, "result"),
    ("F.log_softmax(h, dim=1)", LINEAR, None, "result"),
    ("F.relu(h)", LINEAR, None, "result"),
    ("h.sigmoid()", LINEAR, None, "result"),
    ("h.tanh()", LINEAR, None, "result"),
    ("h.exp()", LINEAR, None, "result"),
    ("F.elu(h)", LINEAR, None, "input"),
    ("F.leaky_relu(h, 0.2)", LINEAR, None, "input"),
    ("F.gelu(h)", LINEAR, None, "input"),
    ("F.silu(h)", LINEAR, None, "input"),
    ("F.relu6(h)", LINEAR, None, "input"),
    ("F.hardtanh(h)", LINEAR, None, "input"),
    ("F.softplus(h)", LINEAR, None, "input"),
    ("torch.log(h)", LINEAR, None, "input"),
    ("torch.sin(h)", LINEAR, None, "input"),
    ("torch.cos(h)", LINEAR, None, "input"),
    ("h ** 2", LINEAR, None, "input"),
    ("h.abs()", LINEAR, None, "input"),
    ("F.max_pool2d(h, 2)", CONV, None, "input"),
    ("F.avg_pool2d(h, 2)", CONV, None, "input"),
    ("self.layer(h)", CONV, "nn.Conv2d(3, 3, 1)", "input"),
    ("self.layer(h)", CONV, "nn.BatchNorm2d(3)", "input"),
    ("self.layer(h)", CONV, "nn.GroupNorm(1, 3)", "input"),
    ("self.layer(h)", CONV, "nn.InstanceNorm2d(3)", "input"),
    ("self.layer(h)", LINEAR, "nn.LayerNorm(8)", "input"),
    ("self.layer(h)", LINEAR, "nn.Linear(8, 8)", "input"),
    ("self.layer(h)", CONV, "nn.MaxPool2d(2)", "input"),
    ("self.layer(h)", LINEAR, "nn.Sigmoid()", "result"),
    ("self.layer(h)", LINEAR, "nn.Tanh()", "result"),
    ("self.layer(h)", LINEAR, "nn.ReLU()", "result"),
    ("self.layer(h)", LINEAR, "nn.Softmax(dim=1)", "result"),
    ("self.layer(h)", LINEAR, "nn.GELU()", "input"),
    ("self.layer(h)", LINEAR, "nn.ELU()", "input"),
    ("self.layer(h)", LINEAR, "nn.LeakyReLU(0.2)", "input"),
    # in-place activations change `h` itself and keep what they wrote
    ("self.layer(h)", LINEAR, "nn.ReLU(inplace=True)", "result"),
    ("self.layer(h)", LINEAR, "nn.LeakyReLU(0.2, inplace=True)", "result"),
    ("self.layer(h)", LINEAR, "nn.ELU(inplace=True)", "result"),
    ("self.layer(h)", LINEAR, "nn.Hardtanh(inplace=True)", None),  # hardtanh_ keeps nothing
    ("self.layer(h)", LINEAR, "nn.ReLU6(inplace=True)", None),
    ("F.relu(h, inplace=True)", LINEAR, None, "result"),
    ("h.relu_()", LINEAR, None, "result"),
    # operations that keep neither
    ("h + 1.0", LINEAR, None, None),
    ("h * 2.0", LINEAR, None, None),
    ("h.sum(dim=1)", LINEAR, None, None),
    ("h.mean(dim=1)", LINEAR, None, None),
    ("torch.cat([h, h], dim=1)", LINEAR, None, None),
    ("h.clone()", LINEAR, None, None),
    ("F.dropout(h, 0.5)", LINEAR, None, None),
    ("self.layer(h)", LINEAR, "nn.Dropout(0.5)", None),
    ("F.interpolate(h, scale_factor=2.0)", CONV, None, None),
]
FAILURE = "modified by an inplace operation"


def module_source(pre: str, layer: str | None, body: list[str]) -> str:
    lines = "".join(f"        {line}\n" for line in body)
    return HEADER.format(pre=pre, layer=layer or "nn.Identity()", body=lines.rstrip("\n"))


def backward_fails(text: str, pre: str) -> bool:
    """Run the module's forward and a backward through everything it returns."""
    namespace: dict = {"__name__": "generated"}
    exec(compile(text, "<generated>", "exec"), namespace)  # noqa: S102 - our own source
    torch.manual_seed(0)
    net = namespace["Net"]()
    outputs = net(torch.randn(*SHAPES[pre]))
    try:
        sum(o.sum() for o in outputs).backward()
    except RuntimeError as error:
        if FAILURE in str(error):
            return True
        raise
    return False


def lf008(text: str) -> list:
    result = analyse_source(SourceFile.from_text(Path("net.py"), text))
    assert result.errors == []
    return [f for f in result.findings if f.rule == "LF008"]


@pytest.mark.parametrize(("operation", "pre", "layer", "kept"), TABLE, ids=lambda v: str(v))
@pytest.mark.parametrize("changed", ["result", "input"])
def test_the_table_matches_torch_and_the_rule(operation, pre, layer, kept, changed):
    """The change fails exactly when it hits the kept tensor, and LF008 reports exactly
    those changes."""
    target = "y" if changed == "result" else "h"
    body = [f"y = {operation}", f"{target} += 1.0", "return y, h"]
    text = module_source(pre, layer, body)
    inplace_activation = "inplace=True" in (layer or "") + operation or "relu_" in operation
    expected = kept == changed or (inplace_activation and kept is not None)
    assert backward_fails(text, pre) is expected, "the table disagrees with torch"
    assert bool(lf008(text)) is expected, "the rule disagrees with torch"


# -- generated forwards -------------------------------------------------------------------

OPERATIONS = [
    "torch.sigmoid({v})", "torch.tanh({v})", "torch.exp({v})", "F.relu({v})", "F.gelu({v})",
    "torch.log({v})", "{v} * 2.0", "{v} + 1.0", "{v}.sum(dim=1, keepdim=True) + {v}",
    "self.fc({v})", "self.norm({v})", "torch.softmax({v}, dim=1)", "{v}[:, :8]",
    "{v} * {w}", "{v}.clone()", "self.block({v})", "self.preact(self.block({v}))",
]  # fmt: skip
CHANGES = [
    "{v} += 1.0", "{v} *= 0.5", "{v}.mul_(0.5)", "{v}[:, 0] = 0.0", "{v}.clamp_(-2.0, 2.0)",
    "{v} = F.relu({v}, inplace=True)", "{v} = self.act({v})", "{v}.unsqueeze_(0)",
    "{v}.squeeze_(0)", "{v} = self.preact({v})",
]  # fmt: skip
NET = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.norm = nn.LayerNorm(8)
        self.act = nn.LeakyReLU(0.2, inplace=True)
        self.block = nn.Sequential(nn.Linear(8, 8), nn.Tanh())
        self.preact = nn.Sequential(nn.ReLU(inplace=True), nn.Linear(8, 8))

    def forward(self, x):
        v0 = self.fc(x)
{body}
        return {returned}
"""


@st.composite
def forwards(draw):
    names, body = ["v0"], []
    for index in range(1, draw(st.integers(2, 7))):
        v = draw(st.sampled_from(names))
        if draw(st.integers(0, 2)) == 0:
            body.append(draw(st.sampled_from(CHANGES)).format(v=v))
            continue
        w = draw(st.sampled_from(names))
        body.append(f"v{index} = " + draw(st.sampled_from(OPERATIONS)).format(v=v, w=w))
        names.append(f"v{index}")
    returned = " + ".join(f"{n}.sum()" for n in names)
    lines = "".join(f"        {line}\n" for line in body).rstrip("\n")
    return NET.format(body=lines, returned=returned)


def run_net(text: str, copy_saved: bool = False) -> tuple[bool, list]:
    """(whether the backward failed, the output and the gradients when it did not)."""
    namespace: dict = {"__name__": "generated"}
    exec(compile(text, "<generated>", "exec"), namespace)  # noqa: S102 - our own source
    torch.manual_seed(0)
    net = namespace["Net"]()
    x = torch.randn(4, 8)
    hooks = torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t)
    with hooks if copy_saved else _nothing():
        out = net(x)
        try:
            out.backward()
        except RuntimeError as error:
            if FAILURE in str(error):
                return True, []
            raise
    return False, [out.detach(), *(p.grad for p in net.parameters())]


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(forwards())
def test_generated_forwards_are_reported_exactly_and_fixed_exactly(text):
    findings = lf008(text)
    failed, _ = run_net(text)
    assert bool(findings) is failed, text
    if not findings:
        return
    result = analyse_source(SourceFile.from_text(Path("net.py"), text))
    fixed = result.fixed_text
    if fixed is None or fixed == text:
        return  # no safe fix (an alias still reads the tensor): nothing to compare
    assert lf008(fixed) == [] or len(lf008(fixed)) < len(findings), fixed
    _, reference = run_net(text, copy_saved=True)
    fixed_failed, values = run_net(fixed)
    if lf008(fixed):
        return  # partly fixed: the remaining change still fails
    assert not fixed_failed, fixed
    for expected, actual in zip(reference, values, strict=True):  # bit for bit, NaN == NaN
        if expected is not None or actual is not None:
            torch.testing.assert_close(actual, expected, rtol=0, atol=0, equal_nan=True)


# -- found by trying to break the rule (each runs; the backward succeeds) -------------------

CORRECT = {
    "a backbone frozen in __init__ by a loop over its parameters": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 8))
        for p in self.backbone.parameters():
            p.requires_grad = False
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        f = torch.sigmoid(self.backbone(x))
        f += 0.5
        return self.head(f)


Net()(torch.randn(3, 4)).sum().backward()
""",
    "a layer frozen by setting its parameters' flags": """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Linear(4, 4)
        self.enc.weight.requires_grad = False
        self.enc.bias.requires_grad = False
        self.head = nn.Linear(4, 1)

    def forward(self, x):
        s = torch.tanh(self.enc(x))
        s *= 2
        return self.head(s)


Net()(torch.randn(2, 4)).sum().backward()
""",
    "thresholding predictions in place after the backward": """
model = nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(2):
    preds = torch.sigmoid(model(torch.randn(6, 4)))
    loss = F.binary_cross_entropy(preds, torch.rand(6, 1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    preds[preds >= 0.5] = 1
    preds[preds < 0.5] = 0
    accuracy = (preds == 1).float().mean().item()
""",
    "timm's TNT attention: an in-place dropout of a configurable probability": """
class Attention(nn.Module):
    def __init__(self, attn_drop=0.0):
        super().__init__()
        self.qk = nn.Linear(8, 16)
        self.attn_drop = nn.Dropout(attn_drop, inplace=True)

    def forward(self, x):
        q, k = self.qk(x).chunk(2, dim=-1)
        attn = (q @ k.transpose(-2, -1)).softmax(dim=-1)
        attn = self.attn_drop(attn)
        return attn @ x


Attention()(torch.randn(2, 5, 8)).sum().backward()
""",
    "probabilities for a metric, the loss from the logits": """
model = nn.Linear(4, 3)
x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
logits = model(x)
loss = F.cross_entropy(logits, y)
probs = logits.softmax(-1)
probs[:, 0] += 0.1
probs[:, 1] -= 0.1
accuracy = (probs.argmax(-1) == y).float().mean().item()
loss.backward()
""",
}
PRELUDE = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_in_place_code_is_left_alone(name):
    text = PRELUDE + CORRECT[name]
    exec(compile(text, "<correct>", "exec"), {"__name__": "correct"})  # noqa: S102 - it runs
    assert lf008(text) == []


# the same tensor kept elsewhere: an out-of-place fix would hide the change from there
ALIASED = {
    "an attribute": "        self.last = out\n",
    "a list": "        kept = [out]\n",
    "a dict": '        kept = {"gate": out}\n',
    "a tuple": "        kept, other = out, out * 2\n",
    "a helper's argument": "        remember(out)\n",
}
GATE = """
memory = []


def remember(t):
    memory.append(t)


class Gate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, r):
        out = torch.sigmoid(self.fc(x))
{alias}        out += r
        return out.sum()
"""


@pytest.mark.parametrize("where", sorted(ALIASED))
def test_a_change_also_seen_elsewhere_is_reported_without_a_fix(where):
    text = PRELUDE + GATE.format(alias=ALIASED[where])
    (finding,) = lf008(text)
    assert finding.fix is None and "no longer see" in (finding.fix_unavailable or "")


def test_inplace_false_only_for_a_module_called_once():
    """Two calls of one in-place module: switching its constructor would change the other
    call (whose argument someone else reads), so the buggy call clones instead."""
    text = (
        PRELUDE
        + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)
        self.act = nn.ReLU(inplace=True)

    def forward(self, x):
        h = self.fc1(x)
        self.hidden = h
        h = self.act(h)
        t = torch.tanh(self.fc2(x))
        t = self.act(t)
        return h + t
"""
    )
    result = analyse_source(SourceFile.from_text(Path("net.py"), text))
    (finding,) = [f for f in result.findings if f.rule == "LF008"]
    assert "t = t.clone()" in result.fixed_text and "inplace=True" in result.fixed_text


# -- in-place views: they change only the shape, but bump the version counter --------------

VIEW_CHANGES = [
    "unsqueeze_(0)", "squeeze_(0)", "transpose_(0, 1)", "t_()", "swapdims_(0, 1)",
    "swapaxes_(0, 1)", "as_strided_((8, 4), (1, 8))",
]  # fmt: skip


@pytest.mark.parametrize("method", VIEW_CHANGES)
@pytest.mark.parametrize(
    ("operation", "kept"),
    [("torch.sigmoid(h)", "result"), ("F.gelu(h)", "input"), ("h * 2.0", None)],
)
@pytest.mark.parametrize("changed", ["result", "input"])
def test_an_in_place_view_of_a_kept_tensor_is_reported_and_fixed(method, operation, kept, changed):
    target = "y" if changed == "result" else "h"
    text = module_source(LINEAR, None, [f"y = {operation}", f"{target}.{method}", "return y, h"])
    expected = kept == changed
    assert backward_fails(text, LINEAR) is expected, "torch disagrees"
    findings = lf008(text)
    assert bool(findings) is expected, "the rule disagrees with torch"
    if expected:
        fixed = analyse_source(SourceFile.from_text(Path("net.py"), text)).fixed_text
        assert f"{target} = {target}.{method.replace('_(', '(')}" in fixed
        assert not backward_fails(fixed, LINEAR) and lf008(fixed) == []


# -- nn.Sequential: what its layers keep, and what its first in-place layer changes -------

BLOCKS = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Sequential({first})
        self.second = nn.Sequential({second})

    def forward(self, x):
{body}
"""
CONV_IN, CONV_MID = "nn.Conv2d(3, 4, 3, padding=1)", "nn.Conv2d(4, 4, 3, padding=1)"
ENDINGS = {  # the first block's last layer -> whether it keeps its result
    "nn.ReLU()": True, "nn.Sigmoid()": True, "nn.Tanh()": True, "nn.ReLU(inplace=True)": True,
    "nn.LeakyReLU(0.2, inplace=True)": True, "nn.ELU(inplace=True)": True,
    "nn.Softmax(dim=1)": True, "nn.BatchNorm2d(4)": False, "nn.GELU()": False,
    "nn.ReLU6(inplace=True)": False, "nn.MaxPool2d(2)": False, "nn.Dropout(0.2)": False,
    CONV_MID: False, "nn.GroupNorm(2, 4)": False,
}  # fmt: skip
STARTS = [  # the second block's first layer, which changes its argument in place
    "nn.ReLU(inplace=True)", "nn.LeakyReLU(0.1, True)", "nn.Dropout(0.3, inplace=True)",
]  # fmt: skip
CALLS = {
    "nested": "        return self.second(self.first(x)).mean()",
    "named": "        h = self.first(x)\n        h = self.second(h)\n        return h.mean()",
}


def blocks_fail(text: str) -> bool:
    namespace: dict = {"__name__": "generated"}
    exec(compile(text, "<generated>", "exec"), namespace)  # noqa: S102 - our own source
    torch.manual_seed(0)
    try:
        namespace["Net"]()(torch.randn(2, 3, 8, 8)).backward()
    except RuntimeError as error:
        if FAILURE in str(error):
            return True
        raise
    return False


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("start", STARTS)
@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_block_changing_what_the_previous_block_kept(ending, start, call):
    """`self.second(self.first(x))` fails exactly when the first block's last layer keeps its
    result and the second's first layer changes it in place; the fix switches that layer."""
    text = BLOCKS.format(
        first=f"{CONV_IN}, {ending}", second=f"{start}, {CONV_MID}", body=CALLS[call]
    )
    expected = ENDINGS[ending]
    assert blocks_fail(text) is expected, "the table disagrees with torch"
    assert bool(lf008(text)) is expected, "the rule disagrees with torch"
    if expected:
        fixed = analyse_source(SourceFile.from_text(Path("net.py"), text)).fixed_text
        assert "inplace=False" in fixed or "False" in fixed.split("self.second")[1]
        assert not blocks_fail(fixed) and lf008(fixed) == []


def test_a_block_keeps_the_input_of_its_first_convolution():
    text = BLOCKS.format(
        first=f"{CONV_IN}, nn.BatchNorm2d(4)",
        second=CONV_MID,
        body="\n".join(
            f"        {line}"
            for line in ["h = x * 2.0", "y = self.first(h)", "h += 1.0", "return y.mean()"]
        ),
    )
    assert blocks_fail(text) and len(lf008(text)) == 1


@pytest.mark.parametrize(
    "built",
    [
        f"*[nn.ReLU(inplace=True), {CONV_MID}]",  # its layers from a list
        f"nn.ReLU(inplace=True), {CONV_MID})\n        self.second.append(nn.Identity()",
        f"nn.ReLU(inplace=True), {CONV_MID})\n        self.second[0] = nn.ReLU(inplace=True",
    ],
)
def test_a_block_whose_layers_are_not_its_constructor_calls_is_not_followed(built):
    """Known misses, never guesses: the walk needs the layers written in the constructor."""
    text = BLOCKS.format(first=f"{CONV_IN}, nn.Tanh()", second=built, body=CALLS["nested"])
    assert blocks_fail(text) and lf008(text) == []


def test_a_frozen_block_keeps_nothing_for_an_input_without_grad():
    """`model.first.requires_grad_(False)` in the training code: the first block's ReLU
    result does not require grad, so nothing keeps it."""
    net = BLOCKS.format(
        first=f"{CONV_IN}, nn.ReLU()",
        second=f"nn.ReLU(inplace=True), {CONV_MID}",
        body=CALLS["nested"],
    )
    training = "model = Net()\nmodel.first.requires_grad_(False)\n"
    text = f"{net}\n\n{training}model(torch.randn(2, 3, 8, 8)).backward()\n"
    exec(compile(text, "<frozen>", "exec"), {"__name__": "frozen"})  # noqa: S102 - it runs
    assert lf008(text) == []


NESTED = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.inner = {inner}
        self.act = nn.ReLU(inplace=True)
        self.outer = {outer}

    def forward(self, x):
        return self.outer(self.act(self.inner(self.conv(x)))).mean()
"""
INNERS = {  # the layer whose result the in-place ReLU changes -> whether it keeps it
    "nn.BatchNorm2d(4)": False, "nn.Conv2d(4, 4, 1)": False, "nn.Identity()": False,
    "nn.Sigmoid()": True, "nn.Tanh()": True, "nn.Softmax(dim=1)": True,
}  # fmt: skip
OUTERS = ["nn.Conv2d(4, 4, 1)", "nn.BatchNorm2d(4)", "nn.Linear(8, 2)", "nn.Sigmoid()"]


@pytest.mark.parametrize("outer", OUTERS)
@pytest.mark.parametrize("inner", sorted(INNERS))
def test_a_call_around_an_in_place_change_keeps_the_changed_tensor(inner, outer):
    """`self.outer(self.act(self.inner(h)))`: the outer layer runs after the in-place ReLU,
    so what it keeps is already changed (DenseNet's `self.conv1(self.relu(self.bn1(x)))` is
    correct); only a result the inner layer kept before the change fails."""
    text = NESTED.format(inner=inner, outer=outer)
    expected = INNERS[inner]
    assert blocks_fail(text) is expected, "the table disagrees with torch"
    assert bool(lf008(text)) is expected, "the rule disagrees with torch"


METRIC_FROM_A_KEPT_TENSOR = """\
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
model = nn.Linear(4, 3)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x, y = torch.randn(6, 4), torch.randint(0, 3, (6,))
    logits = model(x)
    probs = torch.softmax(logits, -1)
    probs.clamp_(min=1e-6)
    entropy = -(probs * probs.log()).sum(-1).mean()
    loss = {loss}
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item(), entropy.item())
"""


@pytest.mark.parametrize(
    ("loss", "reported"),
    [
        ("F.cross_entropy(logits, y)", []),
        ("F.cross_entropy(logits, y) - 0.01 * entropy", ["LF008"]),
    ],
    ids=["a metric", "an entropy bonus"],
)
def test_a_change_only_a_metric_reads_is_not_reported(loss, reported, tmp_path):
    """`probs.clamp_()` changes what softmax kept, but only an entropy printed as a metric
    reads it: the loss is the logits' cross entropy, whose backward never reaches the
    softmax, and the loop runs. With the entropy in the loss, the backward goes through
    the softmax and raises the version error: reported."""
    from scripts import run_script

    source = METRIC_FROM_A_KEPT_TENSOR.format(loss=loss)
    done = run_script(source, tmp_path)
    assert ("modified by an inplace operation" in done.stderr) is bool(reported), done.stderr
    findings = analyse_source(SourceFile.from_text("train.py", source), project=None).findings
    assert [f.rule for f in findings] == reported


LAYERS_BUILT_IN_ONE_ASSIGNMENT = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
{built}
opt = torch.optim.SGD([*cell.parameters(), *head.parameters()], lr=0.1)
for step in range(3):
    h = cell(torch.randn(1, 4))
    loss = head(h).pow(2).sum()
    opt.zero_grad()
    h.mul_(0.5)
    loss.backward()
    opt.step()
"""


@pytest.mark.parametrize(
    "built",
    [
        "cell, head = nn.Linear(4, 6), nn.Linear(6, 1)",
        "cell = nn.Linear(4, 6)\nhead = nn.Linear(6, 1)",
    ],
    ids=["one tuple assignment", "two assignments"],
)
def test_layers_built_in_one_tuple_assignment_keep_their_input(built, tmp_path):
    """`cell, head = nn.Linear(4, 6), nn.Linear(6, 1)`: `head(h)` keeps `h` for its weight's
    gradient, as when each layer has its own assignment, so `h.mul_(0.5)` before the
    backward fails it (the program raises): reported and fixed out of place either way."""
    from scripts import run_script

    source = LAYERS_BUILT_IN_ONE_ASSIGNMENT.format(built=built)
    assert "modified by an inplace operation" in run_script(source, tmp_path).stderr
    result = analyse_source(SourceFile.from_text("train.py", source), project=None)
    assert [f.rule for f in result.findings] == ["LF008"]
    assert "h = h.mul(0.5)" in result.fixed_text
    assert run_script(result.fixed_text, tmp_path).returncode == 0
