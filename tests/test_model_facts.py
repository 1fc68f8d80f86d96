"""Facts the program model must get right for the rules to stay precise: each snippet runs the
way its test says (the corpus holds the full, runnable cases)."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest
from scripts import rules_reported, run_script

from loopfix.analysis import analyse_source
from loopfix.model.index import index_tree
from loopfix.model.symbols import collect_symbols
from loopfix.source import SourceFile


def rules_of(text: str) -> list[str]:
    result = analyse_source(SourceFile.from_bytes("snippet.py", textwrap.dedent(text).encode()))
    assert result.errors == []
    return sorted(f.rule for f in result.findings)


LIST_STATE = """
    import torch
    import torch.nn as nn

    gru, head = nn.GRU(4, 8, batch_first=True), nn.Linear(8, 4)
    opt = torch.optim.SGD([*gru.parameters(), *head.parameters()], lr=0.1)
    seq = torch.randn(2, 40, 4)
    state = [torch.zeros(1, 2, 8), None]
    for t in range(0, 35, 5):
        out, h = gru(seq[:, t : t + 5], state[0])
        loss = nn.functional.mse_loss(head(out), seq[:, t + 1 : t + 6])
        opt.zero_grad()
        loss.backward()
        opt.step()
        {carry}
"""


@pytest.mark.parametrize(
    "carry, expected",
    [
        ("state = [h.detach(), head(out)]", []),  # the entry read holds no graph
        ("state = [h, head(out).detach()]", ["LF001"]),
        # entries moved: no position is known any more
        ("state = [head(out).detach(), h]\n        state.reverse()", ["LF001"]),
        ("state = [head(out).detach(), h]\n        state.insert(0, state.pop())", ["LF001"]),
        ("state = [head(out).detach(), h]\n        state = [state[1], state[0]]", ["LF001"]),
        ("state = [h.detach(), None]\n        state[0] = h", ["LF001"]),
    ],
)
def test_a_list_entry_holds_its_own_graphs(carry, expected):
    assert rules_of(LIST_STATE.format(carry=carry)) == expected


AMP_GAN = """
    import torch
    import torch.nn as nn
    from apex import amp

    G, D = nn.Linear(8, 4), nn.Linear(4, 1)
    opt_g = torch.optim.Adam(G.parameters(), 1e-4)
    opt_d = torch.optim.Adam(D.parameters(), 1e-4)
    {initialize}
    for i in range(3):
        fake = G(torch.randn(8, 8))
        fake_out = D(fake)
        d_loss = -D(torch.randn(8, 4)).mean() + fake_out.mean()
        opt_d.zero_grad()
        d_loss.backward(retain_graph=True)
        opt_d.step()
        g_loss = -fake_out.mean()
        opt_g.zero_grad()
        g_loss.backward()
        opt_g.step()
"""


@pytest.mark.parametrize(
    "initialize, expected",
    [
        ("", ["LF002"]),
        (
            "[G, D], [opt_g, opt_d] = amp.initialize([G, D], [opt_g, opt_d], opt_level='O1')",
            ["LF002"],
        ),
        ("G, opt_g = amp.initialize(G, opt_g)\n    D, opt_d = amp.initialize(D, opt_d)", ["LF002"]),
    ],
)
def test_an_unknown_call_handing_back_its_modules_keeps_them(initialize, expected):
    """`model, optimizer = amp.initialize(model, optimizer)` (apex): the same objects; the
    GAN whose generator loss reuses the stepped discriminator's output is found through it."""
    assert rules_of(AMP_GAN.format(initialize=initialize)) == expected


def test_an_unknown_call_given_modules_builds_no_graph_of_its_own():
    """The L2 penalty over `model.parameters()` after `amp.initialize` holds no graph built
    before the loop (which its first backward would have freed for the next iteration)."""
    text = """
        import torch
        import torch.nn as nn
        from apex import amp

        model = nn.Linear(8, 4)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
        for step in range(3):
            loss = model(torch.randn(4, 8)).pow(2).mean()
            loss = loss + 1e-4 * sum(p.pow(2).sum() for p in model.parameters())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """
    assert rules_of(text) == []


METRIC_LOOP = """
    import torch
    import torch.nn as nn
    {imports}

    model = nn.Linear(8, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    {metric}
    for epoch in range(2):
        train_acc = 0
        for step in range(4):
            y_pred = model(torch.randn(16, 8))
            y = torch.randint(0, 4, (16,))
            loss = nn.functional.cross_entropy(y_pred, y)
            train_acc += {call}
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print(train_acc / 4)
"""


@pytest.mark.parametrize(
    "imports, metric, call, expected",
    [
        # torchmetrics' classification metrics count arg-maxed predictions: no graph
        (
            "import torchmetrics",
            "acc = torchmetrics.Accuracy(task='multiclass', num_classes=4)",
            "acc(y_pred, y)",
            [],
        ),
        (
            "from torchmetrics.classification import MulticlassF1Score",
            "f1 = MulticlassF1Score(num_classes=4).to('cpu')",
            "f1(y_pred, y)",
            [],
        ),
        (
            "from torchmetrics.functional import accuracy",
            "",
            "accuracy(y_pred, y, task='multiclass', num_classes=4)",
            [],
        ),
        (
            "from helper_functions import accuracy_fn",
            "",
            "accuracy_fn(y_true=y, y_pred=y_pred)",
            [],
        ),
        # a regression metric's value keeps its graph (torchmetrics' forward does)
        (
            "import torchmetrics",
            "mse = torchmetrics.MeanSquaredError()",
            "mse(y_pred, torch.randn(16, 4))",
            ["LF006"],
        ),
        ("", "", "nn.functional.mse_loss(y_pred, torch.randn(16, 4))", ["LF006"]),
    ],
)
def test_a_classification_metric_holds_no_graph(imports, metric, call, expected):
    text = METRIC_LOOP.format(imports=imports, metric=metric, call=call)
    assert rules_of(text) == expected


def test_a_call_site_whose_argument_graph_has_a_module_of_unknown_path_records_no_origin():
    """`modules_of` answers None for a graph built by a call of unknown receiver (a fairseq
    model calling `self.<unknown>(x)`): the parameter's origin stays unknown, and renaming
    the caller's paths into the callee's does not fail on it."""
    import ast

    from loopfix.model import shapes
    from loopfix.model.graphs import Graph, Value
    from loopfix.model.instances import CallSites

    function = ast.parse("def f(x, net):\n    return net(x)\n").body[0]
    sites = CallSites()
    graph = Value(frozenset({Graph(site=(1,))}), shapes.TENSOR)
    net = Value(frozenset(), ("object", "Net"))
    sites.record(
        function,
        {"x": (graph, "h"), "net": (net, "model")},
        modules_of=lambda value: frozenset({None, "model"}),
    )
    assert sites.origins.get((id(function), "x")) is None


FREED = "backward through the graph a second time"


def assert_reported_when_it_raises(source: str, rule: str, raises: bool, tmp_path) -> None:
    """The script really raises the freed-graph error exactly when `rule` is reported."""
    run = run_script(source, tmp_path)
    assert (FREED in run.stderr) is raises, run.stderr
    assert (rule in rules_reported(source)) is raises


TRANSITION = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
actor, critic = nn.Linear(3, 1), nn.Linear(3, 1)
opt_a = torch.optim.Adam(actor.parameters())
opt_c = torch.optim.Adam(critic.parameters())
for step in range(3):
    state = torch.randn(3)
    log_prob = actor(state).sum()
    transition = [state, log_prob]
    {grow}
    value_loss = critic(state).sum(){value_extra}
    opt_c.zero_grad()
    value_loss.backward()
    opt_c.step()
    policy_loss = -log_prob
    opt_a.zero_grad()
    policy_loss.backward()
    opt_a.step()
"""


@pytest.mark.parametrize(
    "grow, value_extra, raises",
    [
        # pg-is-all-you-need's A2C: the transition grows, then is unpacked item by item
        ("transition.extend([1.0, False])\n    state, log_prob, r, d = transition", "", False),
        ("transition += [1.0, False]\n    state, log_prob, r, d = transition", "", False),
        ("transition.append(1.0)\n    state, log_prob, r = transition", "", False),
        # controls: the critic's loss goes through the actor's graph, and frees it
        ("transition.extend([1.0, False])\n    state, lp, r, d = transition", " + lp", True),
        ("transition.append(log_prob)\n    state, a, lp = transition", " + lp", True),
        # positions move: the item read is the log-prob, not what came last
        ("transition.insert(0, 1.0)\n    r, s, c = transition", " + c", True),
        ("del transition[0]\n    c = transition[0]", " + c", True),
        ("transition.append(1.0)\n    c = transition[1:][0]", " + c", True),
        (
            "transition.append(1.0)\n    u = transition\n    u.insert(0, 2.0)\n"
            "    c = transition[2]",
            " + c",
            True,
        ),
        (
            "transition.append(1.0)\n    list.insert(transition, 0, 2.0)\n    c = transition[2]",
            " + c",
            True,
        ),
    ],
    ids=[
        "extend",
        "add",
        "append",
        "extend_reached",
        "append_reached",
        "insert",
        "del",
        "slice",
        "alias",
        "handed_to_a_call",
    ],
)
def test_a_list_grown_by_append_or_extend_keeps_each_position(grow, value_extra, raises, tmp_path):
    source = TRANSITION.format(grow=grow, value_extra=value_extra)
    assert_reported_when_it_raises(source, "LF003", raises, tmp_path)


CONSTANT_MODE = """\
import torch
import torch.nn as nn

{binding}
rnn, head = nn.GRU(4, 8, batch_first=True), nn.Linear(8, 1)
opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)


def train():
    h = torch.zeros(1, 2, 8)
    for step in range(3):
        out, h = rnn(torch.randn(2, 5, 4), h)
        loss = head(out).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if {test}:
            h = h.detach()


{before_training}train()
"""


@pytest.mark.parametrize(
    "binding, test, before_training, raises",
    [
        ('MODE = "detach"', 'MODE == "detach"', "", False),
        ('MODE = "keep"', 'MODE == "detach"', "", True),
        ('MODE = "detach"', 'MODE in ("detach", "truncate")', "", False),
        ('MODE = "detach"', 'MODE != "keep" and not KEEP', "KEEP = False\n", False),
        ("UPDATE = ['detach', 'keep'][0]", 'UPDATE == "detach"', "", False),
        ("UPDATE = ['detach', 'keep'][1]", 'UPDATE == "detach"', "", True),
        ("TRUNCATE = True", "TRUNCATE", "", False),
        ("CLIP = None", "CLIP is None", "", False),
        # not one value: rebound by a function, or computed
        (
            'MODE = "detach"',
            'MODE == "detach"',
            'def keep_graphs():\n    global MODE\n    MODE = "keep"\n\n\nkeep_graphs()\n',
            True,
        ),
        ('MODE = "detach" if torch.cuda.is_available() else "keep"', 'MODE == "detach"', "", True),
        ('MODE = "detach"', 'MODE == "detach"', 'globals().update(MODE="keep")\n', True),
        ('MODE = "detach"', 'MODE == "detach"', "exec(\"MODE = 'keep'\")\n", True),
        ('MODE = "detach"', 'MODE == "detach"', "from string import digits as MODE\n", True),
        (
            'MODE = "detach"',
            'MODE == "detach"',
            'match "keep":\n    case MODE:\n        pass\n',
            True,
        ),
    ],
    ids=[
        "equal",
        "equal_false",
        "in",
        "and_not",
        "list_item",
        "list_item_false",
        "flag",
        "is_none",
        "rebound",
        "computed",
        "globals_updated",
        "exec",
        "imported_as",
        "match_capture",
    ],
)
def test_a_test_of_a_module_constant_takes_one_branch(
    binding, test, before_training, raises, tmp_path
):
    source = CONSTANT_MODE.format(binding=binding, test=test, before_training=before_training)
    assert_reported_when_it_raises(source, "LF001", raises, tmp_path)


HELPER_PER_CRITIC = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
c1, c2 = nn.Linear(4, 1), nn.Linear(4, 1)
o1 = torch.optim.Adam(c1.parameters())
o2 = torch.optim.Adam(c2.parameters())


def values(x, critic):
    return critic(x) - 1.0


for step in range(3):
    x = torch.randn(8, 4)
    v1 = values(x, c1)
    v2 = {second}
    o1.zero_grad()
    v1.pow(2).mean().backward()
    o1.step()
    o2.zero_grad()
    v2.pow(2).mean().backward()
    o2.step()
"""


@pytest.mark.parametrize(
    "second, raises",
    [
        ("values(x, c2)", False),  # BY571's CQL: one helper, called once per critic
        ("values(x, c2) + v1", True),  # control: the second loss goes through c1's graph
    ],
    ids=["per_critic", "through_the_first"],
)
def test_a_function_handed_other_modules_builds_other_graphs(second, raises, tmp_path):
    source = HELPER_PER_CRITIC.format(second=second)
    assert_reported_when_it_raises(source, "LF003", raises, tmp_path)


# wiseodd/generative-models' GibbsNet (`from itertools import *`): the generator's optimizer
# steps the encoder and decoder through `chain`, twice in one iteration; with `chain` unknown,
# an unsafe recompute was offered that still raised (the first generator step changed the
# weights too)
STAR_IMPORTED_CHAIN = """\
import torch
import torch.nn as nn
{imports}

torch.manual_seed(0)
Q = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
P = nn.Sequential(nn.Linear(3, 16), nn.ReLU(), nn.Linear(16, 8), nn.Sigmoid())
D = nn.Sequential(nn.Linear(11, 16), nn.ReLU(), nn.Linear(16, 1), nn.Sigmoid())
G_solver = torch.optim.Adam(chain(Q.parameters(), P.parameters()), lr=1e-4)
D_solver = torch.optim.Adam(D.parameters(), lr=1e-4)
for it in range(3):
    X = torch.rand(4, 8)
    z_hat = Q(X)
    X_hat = P(torch.randn(4, 3))
    p_data = D(torch.cat([X, z_hat], 1))
    p_model = D(torch.cat([X_hat, Q(X_hat)], 1))
    D_loss = -torch.mean(torch.log(p_data) + torch.log(1 - p_model))
    D_loss.backward(retain_graph=True)
    D_solver.step()
    G_solver.step()
    D_solver.zero_grad()
    G_solver.zero_grad()
    G_loss = -torch.mean(torch.log(p_model) + torch.log(1 - p_data))
    G_loss.backward()
    G_solver.step()
    G_solver.zero_grad()
"""


@pytest.mark.parametrize("imports", ["from itertools import chain", "from itertools import *"])
def test_a_name_star_imported_from_the_standard_library_is_known(imports, tmp_path):
    source = STAR_IMPORTED_CHAIN.format(imports=imports)
    assert "modified by an inplace operation" in run_script(source, tmp_path).stderr
    (finding,) = analyse_source(SourceFile.read(tmp_path / "train.py"), project=None).findings
    assert finding.rule == "LF002" and finding.fix is None
    assert "`G_solver` steps the same parameters twice" in finding.fix_unavailable


def test_a_star_import_does_not_rename_what_the_module_defines_itself(tmp_path):
    """Its own `chain` (a concatenation of parameter lists) is not `itertools.chain`."""
    source = STAR_IMPORTED_CHAIN.format(
        imports="from itertools import *\n\n\ndef chain(*groups):\n"
        "    return [p for group in groups for p in group]\n"
    )
    assert "modified by an inplace operation" in run_script(source, tmp_path).stderr
    tree = ast.parse(source)
    symbols = collect_symbols(tree, index_tree(tree))
    assert "chain" not in symbols.imports and symbols.imports["count"] == "itertools.count"


NUMPY_BUFFER = """\
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(0)
critic = nn.Linear(3, 1)
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
values = {buffer}
for iteration in range(3):
    obs = torch.randn(4, 3)
    for t in range(4):
        values[t] = critic(obs[t])
    target = torch.Tensor(values) + 1.0
    loss = (critic(obs).squeeze(1) - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "buffer",
    [
        "np.zeros(4, dtype=np.float32)",
        "np.empty(4)",
        "np.zeros_like(np.ones(4))",
        "np.array([0.0] * 4)",
        "np.array([0.0, 0.0, 0.0, 0.0])",
    ],
)
def test_an_output_stored_into_a_numpy_array_leaves_no_graph_there(buffer, tmp_path):
    """NumPy converts what is stored into an array's item to a number (deep_rl's rollout
    buffers): the array carries no graph into the next iteration."""
    source = NUMPY_BUFFER.format(buffer=buffer)
    run = run_script(source, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(source) == []


OBJECT_HELD_BUFFER = """\
import numpy as np
import torch
import torch.nn as nn


class RolloutBuffer:
    def __init__(self, size):
        self.values = {buffer}
        self.ptr = 0

    def add(self, value):
        self.values[self.ptr] = value
        self.ptr += 1

    def get(self):
        self.ptr = 0
        return {values}


torch.manual_seed(0)
critic = nn.Linear(3, 1)
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
buffer = RolloutBuffer(4)
for iteration in range(3):
    obs = torch.randn(4, 3)
    for t in range(4):
        buffer.add(critic(obs[t]))
    target = buffer.get() + 1.0
    loss = (critic(obs).squeeze(1) - target).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "buffer, values, raises",
    [
        ("np.zeros(size, dtype=np.float32)", "torch.Tensor(self.values)", False),
        ("np.empty(size)", "torch.Tensor(self.values)", False),
        ("torch.zeros(size)", "self.values", True),  # a tensor's item keeps the graph
    ],
)
def test_a_numpy_array_an_object_holds_keeps_no_graph_either(buffer, values, raises, tmp_path):
    """deep_rl's rollout buffer: `__init__` makes the arrays, `add` stores the critic's
    outputs into them through `self` (control: a tensor buffer carries the last iteration's
    graph, and the next backward goes through it)."""
    source = OBJECT_HELD_BUFFER.format(buffer=buffer, values=values)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF001"] if raises else [])


GROWING_BUFFER = """\
import numpy as np
import torch
import torch.nn as nn


class Buffer:
    def __init__(self, n):
        self.values = {array}
        self.ptr = 0

    def add(self, value):
        self.values[self.ptr] = value
        self.ptr += 1


critic = nn.Linear(4, 1)
optimizer = torch.optim.SGD(critic.parameters(), lr=0.1)
buffer = Buffer(8)
for iteration in range(3):
    obs = torch.randn(1, 4)
    buffer.add(critic(obs).sum())
    optimizer.zero_grad()
    loss = (critic(obs).sum() - {total}).pow(2)
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(
    "array, total, raises",
    [
        ("np.zeros(n, dtype=np.float32)", "float(buffer.values.sum())", False),
        ("np.zeros(n, dtype=object)", "buffer.values.sum()", True),  # it keeps the tensor
        ("np.full(n, None)", "buffer.values[:buffer.ptr].sum()", True),  # an object array
        ("np.array([None] * n)", "buffer.values[:buffer.ptr].sum()", True),  # objects too
        ("np.empty(n, dtype=self.kind)", "buffer.values[:buffer.ptr].sum()", None),  # not shown
    ],
)
def test_an_array_of_objects_keeps_the_tensors_stored_in_it(array, total, raises, tmp_path):
    """`dtype=object` (or a fill value of None) stores the tensor itself, graph and all: the
    earlier iterations' outputs, summed into the next loss, take its backward through graphs
    already freed. A dtype the code does not show is taken to be one."""
    source = GROWING_BUFFER.format(array=array, total=total)
    if raises is None:  # the class says which dtype: object here
        source = source.replace("class Buffer:\n", "class Buffer:\n    kind = object\n\n")
        raises = True
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF001"] if raises else [])


TRANSITION_GROWN_FROM_EMPTY = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
policy, critic = nn.Linear(4, 2), nn.Linear(4, 1)
policy_optimizer = torch.optim.Adam(policy.parameters(), lr=1e-3)
critic_optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
for step in range(3):
    obs = torch.randn(4)
    transition = []
    transition.extend([torch.log_softmax(policy(obs), -1)[0], critic(obs)])
    transition.extend([1.0])
    log_pi, v, reward = transition
    advantage = reward - v
    policy_loss = -log_pi * {advantage}
    critic_loss = advantage.pow(2).mean()
    critic_optimizer.zero_grad()
    critic_loss.backward()
    critic_optimizer.step()
    policy_optimizer.zero_grad()
    policy_loss.backward()
    policy_optimizer.step()
"""


@pytest.mark.parametrize("advantage, raises", [("advantage.detach()", False), ("advantage", True)])
def test_a_list_grown_from_empty_by_extend_keeps_its_positions(advantage, raises, tmp_path):
    """deep_rl's A2C: the actor's log-prob and the critic's value travel in one list that
    starts empty; unpacked, each name holds its own graph (control: the actor's loss goes
    through the critic's graph, which the critic's backward freed)."""
    source = TRANSITION_GROWN_FROM_EMPTY.format(advantage=advantage)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF003"] if raises else [])


@pytest.mark.parametrize(
    "source, qualified",
    [
        ('import torch.multiprocessing as _mp\nmp = _mp.get_context("spawn")\n',
         "torch.multiprocessing.Process"),
        ('import torch.multiprocessing as mp\nmp = mp.get_context("spawn")\n',
         "torch.multiprocessing.Process"),
        ('from multiprocessing import get_context\n\ndef main():\n    mp = get_context("fork")\n',
         "multiprocessing.Process"),
        # bound to something else too: which one `mp.Process` names is not known
        ('import torch.multiprocessing as _mp\nmp = _mp.get_context("spawn")\nmp = pool()\n',
         "mp.Process"),
        ('import torch.multiprocessing as _mp\nmp = _mp.get_context("spawn")\n'
         'for mp in range(2):\n    pass\n', "mp.Process"),
        # a `get_context` of something else
        ("import decimal\nmp = decimal.get_context()\n", "mp.Process"),
    ],
    ids=["aliased module", "same name", "imported function", "rebound", "loop variable",
         "not multiprocessing"],
)  # fmt: skip
def test_a_multiprocessing_context_qualifies_as_its_module(source, qualified):
    """`mp = _mp.get_context("spawn")` has the module's API: `mp.Process(target=...)` is
    `torch.multiprocessing.Process`, as Super-mario-bros-A3C starts its workers."""
    tree = ast.parse(source)
    symbols = collect_symbols(tree, index_tree(tree))
    assert symbols.qualify(ast.parse("mp.Process", mode="eval").body) == qualified


NETWORKS_BUILT = """
    import torch
    import torch.nn as nn

    SMALL = False


    def build(ready=True):
        {early}
        nets = []
        if SMALL:
            nets = [nn.Linear(4, 1)]
        else:
            nets.append(nn.Linear(4, 1))
            nets.append(nn.Sequential(nn.Linear(4, 2), nn.Linear(2, 1)))
        return [nn.Linear(2, 4), nets]


    g, nets = build()
    optimizers = [torch.optim.SGD(net.parameters(), lr=0.1) for net in nets]
    for step in range(3):
        x = g(torch.randn(2, 2)).detach()
        for i in range(len(nets)):
            loss = nets[i](x).pow(2).mean()
            optimizers[i].zero_grad()
            loss.backward()
            optimizers[i].step()
"""


@pytest.mark.parametrize("early", ["pass", "if not ready:\n            return"])
def test_a_list_of_networks_built_on_either_path_is_walked_as_networks(early, tmp_path):
    """AttnGAN's `build_models`: a list literal on one path, appends on the other (joined: a
    list of networks), handed back in a list a helper may not return when it leaves early
    (unpacking `None` raises, so past the unpacking the list is there)."""
    from loopfix.analysis import parse_context

    text = textwrap.dedent(NETWORKS_BUILT).replace("{early}", early)
    assert run_script(text, tmp_path).returncode == 0  # runs as written
    model = parse_context(text, "snippet.py").model
    loops = model.observations.loops.items()
    (inner,) = [i for i, loop in loops if ast.unparse(loop.iter) == "range(len(nets))"]
    assert model.shape_before(model.loop(inner), "nets")[0] == "seq"
    assert model.walks_models(inner)
    assert not model.walks_models(next(i for i in model.observations.loops if i != inner))


EVALUATION_TOTAL = """
    import torch
    import torch.nn as nn

    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    target = torch.zeros(8, dtype=torch.long)
    val_loss = 0
    for x in torch.randn(3, 8, 4):
        loss = nn.functional.cross_entropy(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with {context}:
            val_loss += nn.functional.cross_entropy(model(x), target)
    print("after-step loss", val_loss / 3, val_loss.grad_fn)
"""


@pytest.mark.parametrize(
    "context, expected",
    [
        ("torch.no_grad()", []),
        ("torch.autograd.no_grad()", []),
        ("torch.autograd.grad_mode.no_grad()", []),
        ("torch.autograd.inference_mode()", []),
        ("torch.autograd.set_grad_enabled(False)", []),
        ("torch.autograd.grad_mode.set_grad_enabled(False)", []),
        ("torch.autograd.set_grad_enabled(True)", ["LF006"]),
        ("torch.autograd.grad_mode.enable_grad()", ["LF006"]),
    ],
)
def test_every_name_torch_gives_a_grad_mode_switch_is_known(context, expected, tmp_path):
    """`torch.autograd.grad_mode.no_grad is torch.no_grad`: a total of losses computed
    under any spelling of a no-grad context holds no graph (the script prints its
    `grad_fn`), and is reported only under a context that enables grad."""
    text = textwrap.dedent(EVALUATION_TOTAL).replace("{context}", context)
    done = run_script(text, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("None") == (expected == [])
    assert rules_of(text) == expected


STATEMENT_GRAD_MODE = """
    import torch
    import torch.nn as nn

    model = nn.Linear(4, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    target = torch.zeros(8, dtype=torch.long)
    for epoch in range(2):
        for x in torch.randn(3, 8, 4):
            loss = nn.functional.cross_entropy(model(x), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        {off}
        val_loss = 0
        for x in torch.randn(3, 8, 4):
            val_loss += nn.functional.cross_entropy(model(x), target)
        {on}
        print("val", val_loss / 3, val_loss.grad_fn)
"""


@pytest.mark.parametrize(
    "off, on, expected",
    [
        ("torch.set_grad_enabled(False)", "torch.set_grad_enabled(True)", []),
        ("torch.autograd.set_grad_enabled(False)", "torch.set_grad_enabled(True)", []),
        ("torch.set_grad_enabled(mode=False)", "torch.set_grad_enabled(mode=True)", []),
        ("pass", "pass", ["LF006"]),
        ("torch.set_grad_enabled(True)", "pass", ["LF006"]),
    ],
)
def test_a_grad_mode_set_by_a_statement_holds_for_the_rest_of_the_block(
    off, on, expected, tmp_path
):
    """`torch.set_grad_enabled(False)` as a statement (an older way to evaluate): the
    losses computed after it in the block hold no graph (the script prints the total's
    `grad_fn`), so the evaluation total is not reported."""
    text = textwrap.dedent(STATEMENT_GRAD_MODE).replace("{off}", off).replace("{on}", on)
    done = run_script(text, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("None") == (expected == [])
    assert rules_of(text) == expected


@pytest.mark.parametrize(
    "case, said",
    [
        (
            "lf003_heads_share_encoder_per_head_backward",
            "the backward on line 15 already freed in an earlier iteration (no retain_graph",
        ),
        (  # a helper's backward reached from two calls of one iteration: another call
            "lf003_backward_in_helper_function",
            "the backward on line 6 already freed (no retain_graph=True there), when called "
            "from line 28",
        ),
    ],
)
def test_a_backward_that_freed_its_own_graph_says_when(case, said):
    """A backward through the graph the same call freed says it was an earlier iteration's
    (else the message names its own line as the one that freed it, which reads as a
    contradiction); a helper's backward reached from two calls names the call instead."""
    path = Path(__file__).parent.parent / "corpus" / case / "before.py"
    result = analyse_source(SourceFile.read(path))
    (finding,) = [f for f in result.findings if f.rule == "LF003"]
    assert said in finding.message


MODE_STATE = """
    import torch
    import torch.nn as nn


    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(4, 8)
            self.head = nn.Linear(8, 4)

        def forward(self, x, h):
            if self.training:
                h = h.detach()
            out, h = self.rnn(x, h)
            return self.head(out), h


    net = Net()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.1)
    data = torch.randn(41, 2, 4)
    training = {training}
    {mode}
    h = torch.zeros(1, 2, 8)
    for i in range(0, 30, 10):
        out, h = net(data[i : i + 10], h)
        loss = (out - data[i + 1 : i + 11]).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("pass", []),  # nn.Module's default: training
        ("net.train()", []),
        ("net.eval()\nnet.train()", []),
        ("net.eval()", ["LF001"]),
        ("net.train(False)", ["LF001"]),
        ("net.train(training)", ["LF001"]),  # a mode not written as a constant: unknown
        ("if training:\n    net.eval()", ["LF001"]),  # one branch sets eval mode
    ],
)
def test_a_test_of_self_training_takes_the_mode_train_and_eval_set(mode, expected, tmp_path):
    """A forward that detaches its state only in training mode: reported exactly where the
    loop may run it in eval mode, which the script shows by raising."""
    text = textwrap.dedent(MODE_STATE).replace("{mode}", mode)
    text = text.replace("{training}", "False" if "if training" not in mode else "True")
    done = run_script(text, tmp_path)
    raises = "backward through the graph a second time" in done.stderr
    assert raises == (expected != []), done.stderr[-300:]
    assert rules_of(text) == expected


@pytest.mark.parametrize("state", ["outputs[1:]", "outputs[-2:]", "outputs[1:3]", "outputs[1::1]"])
def test_a_slice_of_a_returned_tuple_holds_the_items_it_picks(state, tmp_path):
    """`outputs[1:]` of `return logits, h.detach(), c.detach()`: the detached state only,
    not the logits' graph (each spelling runs, and is not reported)."""
    path = Path(__file__).parent.parent / "corpus"
    text = path / "lf001_ok_state_sliced_from_outputs_detached_in_forward" / "before.py"
    text = text.read_text().replace("outputs[1:]", state)
    assert run_script(text, tmp_path).returncode == 0
    assert rules_of(text) == []


@pytest.mark.parametrize(
    "step, test, expected",
    [
        ("bptt", "i > 0", []),  # a stride: every value after the first is above it
        ("10", "i > 0", []),
        ("10", "i != 0", []),
        ("10", "i == 0 and h is not None", ["LF001"]),  # detached in the first batch only
        ("10", "i > 10", ["LF001"]),  # not detached in the second batch
        ("10", "i % 20 == 0", ["LF001"]),  # a residue of a stepped counter: not followed
    ],
)
def test_a_counter_stepping_by_more_than_one_decides_first_iteration_tests(
    step, test, expected, tmp_path
):
    """`for i in range(0, n, bptt):`: its first value is the start, every later one is
    above it, so a test of the first iteration is decided whatever the step; other tests of
    it are not. Each script raises exactly where it is reported."""
    path = Path(__file__).parent.parent / "corpus"
    case = path / "lf001_ok_state_repackaged_after_the_first_stepped_batch" / "before.py"
    text = case.read_text().replace("if i > 0:", f"if {test}:").replace(", bptt):", f", {step}):")
    if "h is not None" in test:
        text = text.replace("h is not None", "hidden is not None")
    done = run_script(text, tmp_path)
    assert ("backward through the graph a second time" in done.stderr) == (expected != [])
    assert rules_of(text) == expected


def test_gradients_read_through_the_private_attribute_are_handed_over():
    """`gp._grad = lp._grad` (Policy-Gradient-Methods' A3C worker) reads the same tensor as
    `lp.grad`: a hand-over like `gp._grad = lp.grad`."""
    import torch

    from loopfix.model.handovers import handovers_in
    from loopfix.model.symbols import collect_symbols

    weight = torch.nn.Linear(2, 1).weight
    weight.sum().backward()
    assert weight._grad is weight.grad
    tree = ast.parse(
        "for lp, gp in zip(local.parameters(), shared.parameters()):\n    gp._grad = lp._grad\n"
    )
    handed = handovers_in(tree.body[0], collect_symbols(tree))
    assert [(h.source, h.target) for h in handed] == [("local", "shared")]


ALIASED_HELPER = """\
import torch
import torch.nn as nn


def detach_state(h):
    return tuple({item} for s in h)


repackage = detach_state
torch.manual_seed(0)
rnn, head = nn.LSTM(4, 8, batch_first=True), nn.Linear(8, 1)
optimizer = torch.optim.Adam([*rnn.parameters(), *head.parameters()], 1e-3)
stream = torch.randn(2, 40, 4)
hidden = (torch.zeros(1, 2, 8), torch.zeros(1, 2, 8))
for t in range(0, 40, 10):
    hidden = repackage(hidden)
    out, hidden = rnn(stream[:, t : t + 10], hidden)
    loss = head(out).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


@pytest.mark.parametrize(("item", "rules"), [("s.detach()", []), ("s", ["LF001"])])
def test_a_module_level_alias_of_a_function_of_the_file_runs_it(item, rules, tmp_path):
    """`repackage = detach_state` in the same module: calling the alias runs the function."""
    source = ALIASED_HELPER.format(item=item)
    run = run_script(source, tmp_path)
    assert ("backward through the graph a second time" in run.stderr) is bool(rules)
    assert rules_reported(source) == rules


UNNAMED_TRAINER = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.a = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
        self.{name} = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.a_opt = torch.optim.SGD(self.a.parameters(), lr=0.1)
        self.b_opt = torch.optim.SGD(self.{name}.parameters(), lr=0.1)

    def fit(self):
        for step in range(3):
            x = torch.randn(6, 4)
            out_a = self.a(x)
            loss_a = out_a.pow(2).mean() + self.{name}(out_a).mean()
            self.a_opt.zero_grad()
            loss_a.backward({retain})
            self.a_opt.step()
            self.b_opt.zero_grad()
            loss_b = self.{name}(self.a(x)).pow(2).mean()
            loss_b.backward()
            self.b_opt.step()


Trainer().fit()
"""


@pytest.mark.parametrize("name", ["ge", "gen"])
def test_a_network_kept_under_a_tensor_methods_name_is_called_as_a_network(name, tmp_path):
    """`self.ge(x)` in a method of `Trainer()`, built without a name: the attribute holds
    the network `__init__` built (`ge` is also a tensor comparison). The discriminator's
    loss is recomputed after the step, so the first backward's retain is needless (LF004)."""
    source = UNNAMED_TRAINER.format(name=name, retain="retain_graph=True")
    assert run_script(UNNAMED_TRAINER.format(name=name, retain=""), tmp_path).returncode == 0
    assert rules_reported(source) == ["LF004"]
