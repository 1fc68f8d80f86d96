"""A network handed to an object's constructor, which keeps it (`self.critic = critic`) and
calls it from a method, is the network the scope named: an optimizer built over
`critic.parameters()` changes the weights `agent.value(x)` saved. That holds only while the
name and the attribute each hold one module: two objects given different networks, a name
bound again after the construction, or an attribute the class's module stores elsewhere leave
the object's network apart from the scope's. Each program is run for the truth."""

from __future__ import annotations

import textwrap

import pytest
from scripts import rules_reported, run_script

from loopfix.analysis import analyse_source
from loopfix.source import SourceFile

PROGRAM = """\
import copy

import torch
import torch.nn as nn


class Agent:
    def __init__(self, critic):
        self.critic = critic

    def value(self, x):
        return self.critic(x)

    def {method}(self):
        self.{stored} = copy.deepcopy(self.critic)


def make_critic():
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))


torch.manual_seed(0)
critic = make_critic()
agent = Agent(critic)
{setup}
optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
for step in range(3):
    x = torch.randn(8, 4)
    v = agent.value(x)
    first = v.pow(2).mean()
    second = (v - 1).abs().mean()
    optimizer.zero_grad()
    first.backward(retain_graph=True)
    optimizer.step()
    second.backward()
"""

# name -> (the method's name and the attribute it stores, what runs after the construction,
# whether the program raises, whether LF002 is reported)
PROGRAMS = {
    "the object keeps the scope's network": ("unused", "copy", "", True, True),
    "the method is called, but stores another attribute": (
        "keep_copy",
        "copy",
        "agent.keep_copy()",
        True,
        True,
    ),
    "the name is bound to a new network after the construction": (
        "unused",
        "copy",
        "critic = make_critic()",
        False,
        False,
    ),
    "the object's network is replaced by a copy in a method": (
        "detach_from_training",
        "critic",
        "agent.detach_from_training()",
        False,
        False,
    ),
    # a known miss, on purpose: the class's attribute is not one network across the scope's
    # constructor calls, so none of the objects is taken to hold the scope's
    "a second object is given another network": (
        "unused",
        "copy",
        "other = Agent(make_critic())",
        True,
        False,
    ),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_a_network_kept_by_an_object_is_the_one_its_optimizer_steps(name, tmp_path):
    method, stored, setup, raises, reported = PROGRAMS[name]
    source = PROGRAM.format(method=method, stored=stored, setup=setup)
    run = run_script(source, tmp_path)
    assert ("modified by an inplace operation" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF002"] if reported else [])


TWO_OBJECTS = """\
import torch
import torch.nn as nn


class Agent:
    def __init__(self, critic):
        self.critic = critic

    def value(self, x):
        return self.critic(x)


torch.manual_seed(0)
first_critic = nn.Linear(4, 1)
second_critic = nn.Linear(4, 1)
first, second = Agent(first_critic), Agent(second_critic)
optimizer = torch.optim.SGD(first_critic.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(8, 4)
    kept = second.value(x).pow(2).mean()
    loss = first.value(x).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    kept.backward()
"""


def test_objects_of_one_class_given_different_networks_stay_apart(tmp_path):
    """The class's attribute has no single origin: the step of the first object's network
    leaves the second object's graph intact, and nothing is reported."""
    run = run_script(TWO_OBJECTS, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(TWO_OBJECTS) == []


TRAINER = """\
import copy

import torch
import torch.nn as nn


class Agent:
    def __init__(self, critic):
        self.critic = critic

    def value(self, x):
        return self.critic(x)


class Trainer:
    def __init__(self, {held}, optimizer):
        self.{held} = {held}
        self.optimizer = optimizer

    def fit(self, steps=3):
{prologue}
        for step in range(steps):
            x = torch.randn(8, 4)
            v = {call}
            first = v.pow(2).mean()
            second = (v - 1).abs().mean()
            optimizer.zero_grad()
            first.backward(retain_graph=True)
            optimizer.step()
            second.backward()


def main():
    torch.manual_seed(0)
    critic = nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-2)
    Trainer({built}, optimizer).fit()


main()
"""

# name -> (what the trainer keeps, how `fit` names it, the call, what `main` builds,
# whether the program raises)
TRAINERS = {
    "a local name for the kept network": (
        "model",
        "        model, optimizer = self.model, self.optimizer",
        "model(x)",
        "critic",
        True,
    ),
    "a local name for the kept network, bound alone": (
        "model",
        "        model = self.model\n        optimizer = self.optimizer",
        "model(x)",
        "critic",
        True,
    ),
    "a local name for an agent that keeps the network": (
        "agent",
        "        agent, optimizer = self.agent, self.optimizer",
        "agent.value(x)",
        "Agent(critic)",
        True,
    ),
    "the agent called through the trainer's attribute": (
        "agent",
        "        optimizer = self.optimizer",
        "self.agent.value(x)",
        "Agent(critic)",
        True,
    ),
    "the local name bound again to a copy of the network": (
        "model",
        "        model, optimizer = self.model, self.optimizer\n"
        "        model = copy.deepcopy(model)",
        "model(x)",
        "critic",
        False,
    ),
}


@pytest.mark.parametrize("name", list(TRAINERS))
def test_a_trainer_steps_the_network_it_reaches_through_its_attributes(name, tmp_path):
    held, prologue, call, built, raises = TRAINERS[name]
    source = TRAINER.format(held=held, prologue=prologue, call=call, built=built)
    run = run_script(source, tmp_path)
    assert ("modified by an inplace operation" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == (["LF002"] if raises else [])


# correct programs whose objects do not keep the network the stepped optimizer was built
# over, though a name or a class would say so: each object is another network
SEPARATE_OBJECTS = {
    "built by one helper called twice": """\
def build(seed):
    torch.manual_seed(seed)
    critic = make_critic()
    agent = Agent(critic)
    return agent, torch.optim.Adam(critic.parameters(), lr=1e-3)


first, first_optimizer = build(0)
second, second_optimizer = build(1)
""",
    "built in a loop": """\
agents, optimizers = [], []
for seed in range(2):
    critic = make_critic()
    agents.append(Agent(critic))
    optimizers.append(torch.optim.Adam(critic.parameters(), lr=1e-3))
first, second = agents
first_optimizer, second_optimizer = optimizers
""",
}
SEPARATE = """\
import torch
import torch.nn as nn


class Agent:
    def __init__(self, critic):
        self.critic = critic

    def value(self, x):
        return self.critic(x)


def make_critic():
    return nn.Sequential(nn.Linear(4, 16), nn.Tanh(), nn.Linear(16, 1))


{built}
for step in range(3):
    x = torch.randn(8, 4)
    first_loss = first.value(x).pow(2).mean()
    second_loss = second.value(x).pow(2).mean()
    first_optimizer.zero_grad()
    first_loss.backward()
    first_optimizer.step()
    second_optimizer.zero_grad()
    second_loss.backward()
    second_optimizer.step()
"""


@pytest.mark.parametrize("name", list(SEPARATE_OBJECTS))
def test_objects_built_more_than_once_keep_networks_of_their_own(name, tmp_path):
    source = SEPARATE.format(built=SEPARATE_OBJECTS[name])
    run = run_script(source, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(source) == []


BRANCHES = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self, critic, lagged, optimizer):
        self.critic, self.lagged, self.optimizer = critic, lagged, optimizer

    def fit(self, use_lagged, steps=3):
        if use_lagged:
            critic = self.lagged
        else:
            critic = self.critic
        for step in range(steps):
            x = torch.randn(8, 4)
            v = critic(x)
            first = self.critic(x).pow(2).mean()
            self.optimizer.zero_grad()
            first.backward()
            self.optimizer.step()
            v.pow(2).mean().backward()


torch.manual_seed(0)
critic, lagged = nn.Linear(4, 1), nn.Linear(4, 1)
Trainer(critic, lagged, torch.optim.SGD(critic.parameters(), lr=0.1)).fit(True)
"""


def test_a_name_bound_to_attributes_in_two_branches_is_neither(tmp_path):
    """Which attribute `critic` is depends on the run (here the lagged copy, which the step
    leaves alone): the name is taken for neither, and nothing is reported."""
    run = run_script(BRANCHES, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(BRANCHES) == []


GAN_OBJECT = """\
import torch
import torch.nn as nn
import torch.nn.functional as F


class GAN:
    def __init__(self, generator, discriminator):
        self.generator = generator
        self.discriminator = discriminator

    def sample(self, n):
        return self.generator(torch.randn(n, 8))

    def score(self, x):
        return self.discriminator(x)


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
D = nn.Sequential(nn.Linear(16, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))
gan = GAN(G, D)
opt_g = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_d = torch.optim.Adam(D.parameters(), lr=2e-4)
for it in range(3):
    fake = gan.sample(8)
    d_real, d_fake = gan.score(torch.randn(8, 16)), gan.score(fake)
    ones, zeros = torch.ones_like(d_real), torch.zeros_like(d_real)
    d_loss = F.binary_cross_entropy_with_logits(
        d_real, ones
    ) + F.binary_cross_entropy_with_logits(d_fake, zeros)
    g_loss = F.binary_cross_entropy_with_logits(d_fake, ones)
    opt_d.zero_grad()
    d_loss.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
"""


def test_a_method_named_like_a_tensor_method_is_followed(tmp_path):
    """`gan.sample(n)` is the class's own method (not `Distribution.sample()`, which draws
    without a graph): the generator's graph reaches the discriminator's loss, so the fix
    keeps that loss out of the generator's gradients too."""
    run = run_script(GAN_OBJECT, tmp_path)
    assert "modified by an inplace operation" in run.stderr, run.stderr
    result = analyse_source(SourceFile.from_bytes("train.py", GAN_OBJECT.encode()))
    assert [f.rule for f in result.findings] == ["LF002"]
    assert "d_loss.backward(retain_graph=True, inputs=list(D.parameters()))" in result.fixed_text
    assert "g_loss.backward(inputs=list(G.parameters()))" in result.fixed_text


GAN_TRAINER = """\
import torch
import torch.nn as nn


class GANTrainer:
    def __init__(self, G, D):
        self.G, self.D = G, D
        self.opt_G = torch.optim.Adam(G.parameters(), lr=1e-3)
        self.opt_D = torch.optim.Adam(D.parameters(), lr=1e-3)

    def update_G(self, fake):
        g_loss = -self.D(fake).mean()
        self.opt_G.zero_grad()
        g_loss.backward(retain_graph=True)
        self.opt_G.step()

    def update_D(self, real, fake):
        d_loss = self.D({fake}).mean() - self.D(real).mean()
        self.opt_D.zero_grad()
        d_loss.backward()
        self.opt_D.step()


torch.manual_seed(0)
G = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 3))
D = nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Linear(8, 1))
trainer = GANTrainer(G, D)
for step in range(3):
    fake = G(torch.randn(5, 2))
    trainer.update_G(fake)
    trainer.update_D(torch.randn(5, 3), fake)
"""


@pytest.mark.parametrize(
    ("fake", "raises", "reported"),
    [("fake", True, ["LF002"]), ("fake.detach()", False, ["LF004"])],
)
def test_a_trainer_steps_the_network_the_script_calls(fake, raises, reported, tmp_path):
    """The trainer's optimizer over `self.G` (built in its `__init__`) steps the `G` the
    script calls to make `fake`: the discriminator's loss on that `fake`, after the
    generator's step, goes back through weights the step changed. On `fake.detach()` it
    does not, and the generator's `retain_graph=True` is needless (LF004)."""
    source = GAN_TRAINER.format(fake=fake)
    run = run_script(source, tmp_path)
    assert ("modified by an inplace operation" in run.stderr) is raises, run.stderr
    assert rules_reported(source) == reported


UNWRAPPED_IN_INIT = """\
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU())
        self.a = nn.Linear(32, 3)
        self.b = nn.Linear(32, 1)


class Trainer:
    def __init__(self):
        self.model = nn.DataParallel(Net())
        m = self.model.module
        self.opt_a = torch.optim.Adam(list(m.enc.parameters()) + list(m.a.parameters()))
        self.opt_b = torch.optim.Adam(list(m.enc.parameters()) + list(m.b.parameters()))

    def step(self, x, ya, yb):
        h = self.model.module.enc(x)
        loss_a = nn.functional.cross_entropy(self.model.module.a(h), ya)
        loss_b = nn.functional.mse_loss(self.model.module.b(h).squeeze(-1), yb)
        self.opt_a.zero_grad()
        loss_a.backward(retain_graph=True)
        self.opt_a.step()
        self.opt_b.zero_grad()
        loss_b.backward()
        self.opt_b.step()


torch.manual_seed(0)
trainer = Trainer()
for it in range(3):
    trainer.step(torch.randn(8, 8), torch.randint(0, 3, (8,)), torch.randn(8))
"""


def test_a_name_an_init_binds_to_an_attribute_is_that_attribute(tmp_path):
    """`m = self.model.module` in `__init__`: the optimizers built over `m.enc` step
    `self.model.module.enc`, which both heads' losses go through."""
    run = run_script(UNWRAPPED_IN_INIT, tmp_path)
    assert "modified by an inplace operation" in run.stderr, run.stderr
    assert rules_reported(UNWRAPPED_IN_INIT) == ["LF002"]


ALIASED = """\
import torch
import torch.nn as nn

torch.manual_seed(0)
netG = {wrap}(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4)))
netD = {wrap}(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
optG = torch.optim.Adam(netG{optimized}.parameters(), lr=1e-3)
optD = torch.optim.Adam(netD{optimized}.parameters(), lr=1e-3)
G, D = netG{called}, netD{called}
for step in range(3):
    fake = G(torch.randn(16, 4))
    {scores}
    lossD = {d_loss}
    optD.zero_grad()
    lossD.backward({retain})
    optD.step()
    lossG = -{g_scores}.mean()
    optG.zero_grad()
    lossG.backward()
    optG.step()
"""
STALE = {"scores": "scores = D(fake)", "d_loss": "scores.mean()", "retain": "retain_graph=True"}
RECOMPUTED = {
    "scores": "pass",
    "d_loss": "D(fake.detach()).mean()",
    "retain": "",
    "g_scores": "D(fake)",
}
ALIASES = {  # name: (wrapper, optimizer over, alias of, the loop's parts, raises and reported)
    "a name for the network": ("", "", "", STALE, True),
    "a name for what DataParallel wraps": ("nn.DataParallel", ".module", ".module", STALE, True),
    "the wrapped network stepped through its wrapper": (
        "nn.DataParallel",
        "",
        ".module",
        STALE,
        True,
    ),
    "a name for the network, D recomputed after its step": ("", "", "", RECOMPUTED, False),
    "a name for what DataParallel wraps, D recomputed": (
        "nn.DataParallel",
        ".module",
        ".module",
        RECOMPUTED,
        False,
    ),
}


@pytest.mark.parametrize("name", list(ALIASES))
def test_a_name_bound_once_to_a_network_is_that_network(name, tmp_path):
    """`D = netD` and `D = netD.module` (what nn.DataParallel wraps) at a script's top: what
    is called through the name is the network its optimizer was built over."""
    wrap, optimized, called, loop, stale = ALIASES[name]
    parts = {"g_scores": "scores", **loop}
    source = ALIASED.format(wrap=wrap, optimized=optimized, called=called, **parts)
    run = run_script(source, tmp_path)
    assert ("modified by an inplace operation" in run.stderr) is stale, run.stderr
    assert rules_reported(source) == (["LF002"] if stale else [])


REBOUND_TEMPLATE = """\
import copy

import torch
import torch.nn as nn


def make(last):
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, last))


{body}
"""
LOOP = """\
    for step in range(3):
        fake = netG(torch.randn(8, 4))
        score = frozen(fake)
        lossD = netD(fake.detach()).mean() - netD(torch.randn(8, 4)).mean()
        optD.zero_grad()
        lossD.backward()
        optD.step()
        lossG = -score.mean()
        optG.zero_grad()
        lossG.backward()
        optG.step()
"""
OPTIMIZERS = """\
    optD = torch.optim.Adam(netD.parameters(), lr=1e-3)
    optG = torch.optim.Adam(netG.parameters(), lr=1e-3)
"""
REBOUND = {  # the alias keeps the network the name held; the name is then another network
    "a copy trained in the name's place": "    frozen = netD\n    netD = copy.deepcopy(netD)\n",
    "a new network in the name's place": "    frozen = netD\n    netD = make(1)\n",
    "both in one statement": "    netD, frozen = make(1), netD\n",
    "what DataParallel wraps, then a copy": (
        "    netD = nn.DataParallel(netD)\n    frozen = netD.module\n"
        "    netD = copy.deepcopy(netD)\n"
    ),
}


@pytest.mark.parametrize("name", list(REBOUND))
@pytest.mark.parametrize("where", ["a function given the networks", "the script's top"])
def test_an_alias_of_a_name_bound_again_is_not_that_name(name, where, tmp_path):
    """`frozen = netD`, then `netD = copy.deepcopy(netD)`: the alias is the network netD
    held, and the optimizer built afterwards steps the copy; the generator's loss through
    `frozen` goes through weights no step changed (runs clean, nothing reported)."""
    body = REBOUND[name] + OPTIMIZERS + LOOP
    if where == "the script's top":
        setup = "torch.manual_seed(0)\nnetG, netD = make(4), make(1)\n"
        body = setup + textwrap.dedent(body)
    else:
        body = (
            "def train(netG, netD):\n" + body + "\n\ntorch.manual_seed(0)\ntrain(make(4), make(1))"
        )
    source = REBOUND_TEMPLATE.format(body=body)
    run = run_script(source, tmp_path)
    assert run.returncode == 0, run.stderr
    assert rules_reported(source) == []


IMPORTED_MODEL = """\
import torch
import torch.nn as nn


class InpaintingModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.generator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 4))
        self.discriminator = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        self.gen_optimizer = torch.optim.Adam(self.generator.parameters(), lr=1e-2)
        self.dis_optimizer = torch.optim.Adam(self.discriminator.parameters(), lr=1e-2)

    def process(self, images):
        self.gen_optimizer.zero_grad()
        self.dis_optimizer.zero_grad()
        outputs = self.generator(images)
        dis_loss = self.discriminator(images).mean() - self.discriminator(outputs.detach()).mean()
        gen_loss = self.discriminator(outputs).mean() + (outputs - images).abs().mean()
        return outputs, gen_loss, dis_loss

    def backward(self, gen_loss, dis_loss):
        dis_loss.backward()
        self.dis_optimizer.step()
        gen_loss.backward()
        self.gen_optimizer.step()
        return gen_loss
"""

TRAINER_HOLDING_IT = """\
import torch
from models import InpaintingModel


class Trainer:
    def __init__(self):
        self.model = InpaintingModel()

    def train(self, batches):
        total = 0
        for images in batches:
            outputs, gen_loss, dis_loss = self.model.process(images)
            total += self.model.backward(gen_loss, dis_loss)
        print(total / len(batches))


Trainer().train([torch.randn(16, 4) for _ in range(3)])
"""


def test_a_model_a_trainer_builds_from_another_module_is_followed(tmp_path):
    """edge-connect's layout: the trainer's `__init__` builds the model class of `models.py`
    and its loop calls the model's methods through the attribute. The discriminator steps
    before the generator's backward through it (the run raises the version error: LF002, in
    `models.py`, where the code is), and the trainer's total keeps each iteration's graph
    (LF006, in the trainer)."""
    from loopfix.project import project_for

    (tmp_path / "models.py").write_text(IMPORTED_MODEL)
    trainer = tmp_path / "trainer.py"
    trainer.write_text(TRAINER_HOLDING_IT)
    done = run_script(TRAINER_HOLDING_IT, tmp_path)
    assert "modified by an inplace operation" in done.stderr, done.stderr
    models = tmp_path / "models.py"
    found = analyse_source(SourceFile.read(models), project=project_for(models)).findings
    assert [(f.rule, f.start) for f in found][:1] == [
        ("LF002", IMPORTED_MODEL.index("gen_loss.backward()"))
    ]
    found = analyse_source(SourceFile.read(trainer), project=project_for(trainer)).findings
    assert [f.rule for f in found] == ["LF006"]


NAMED_LIKE_A_TENSOR_METHOD = """\
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.a = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))
        self.ge = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        self.a_opt = torch.optim.SGD(self.a.parameters(), lr=0.1)
        self.ge_opt = torch.optim.SGD(self.ge.parameters(), lr=0.1)

    def fit(self):
        for step in range(3):
            out_a = self.a(torch.randn(6, 4))
            out_b = self.ge(out_a)
            loss_a = out_a.pow(2).mean() + out_b.mean()
            self.a_opt.zero_grad()
            loss_a.backward()
            self.a_opt.step()
            self.ge_opt.zero_grad()
            loss_b = out_b.pow(2).mean()
            loss_b.backward()
            self.ge_opt.step()


Trainer().fit()
"""


def test_a_network_kept_under_a_tensor_methods_name_is_a_network(tmp_path):
    """`self.ge(out_a)` calls the network kept as `self.ge`, not `Tensor.ge` (a comparison,
    which builds no graph): the second backward goes through its freed graph and raises.
    Found by the generated-update properties (`tests/test_update_properties.py`)."""
    assert "a second time" in run_script(NAMED_LIKE_A_TENSOR_METHOD, tmp_path).stderr
    assert rules_reported(NAMED_LIKE_A_TENSOR_METHOD) == ["LF003"]
