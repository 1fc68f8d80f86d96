"""A hypothesis strategy for small two-model training loops, correct or with an update bug."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

from generated_loops import names, render

# How the iteration is ordered, and what loopfix must say about it.
SHAPES = {
    "step_then_retained_backward": ("LF002",),  # the in-place version error
    "step_then_freed_backward": ("LF003",),  # backward through a freed graph
    "dcgan_recompute_after_step": (),  # B's loss recomputes A's forward after A steps
    "detached_for_b": (),  # B's loss never reaches A
    "all_backwards_first": (),  # already in the fixed order
}


# How a network is built, as real training code writes it ({} is the constructor).
CONSTRUCTIONS = {
    "plain": "{}",
    "to_device": "{}.to('cpu')",
    "chain": "{}.to('cpu').float().train()",
    "data_parallel": "nn.DataParallel({})",
    "separate_statement": "{}",  # followed by `net.to(device)` / `net = net.to(device)`
}


def rename_line(line: str, suffix: str) -> str:
    """Every name a line assigns or reads that the loop uses, with `suffix` (the caller's
    own names for what it passes in)."""
    return re.sub(r"\b([a-z][a-z0-9_]*)\b(?=(\s*=[^=]|\.|\)|,|\s*\]|\s*\}))",
                  lambda m: m.group(1) + suffix if m.group(1) not in KEEP else m.group(1),
                  line)  # fmt: skip


def on_self(line: str, names: list[str]) -> str:
    """`net.step()` -> `self.net.step()` for the names the trainer keeps on itself."""
    pattern = r"(?<![\w.'\"])(" + "|".join(map(re.escape, names)) + r")\b(?!['\"])"
    return re.sub(pattern, r"self.\1", line)


KEEP = {"nn", "torch", "optim", "lr", "x", "out_a", "out_b", "loss_a", "loss_b", "sched",
        "step_size", "inputs", "retain_graph", "lr_scheduler", "utils"}  # fmt: skip


@dataclass(frozen=True)
class UpdateProgram:
    text: str
    expected_rules: tuple[str, ...]
    description: str


@st.composite
def update_programs(draw) -> UpdateProgram:
    shape = draw(st.sampled_from(sorted(SHAPES)))
    a, b = draw(st.lists(names, min_size=2, max_size=2, unique=True))
    opt_a, opt_b = f"{a}_opt", f"{b}_opt"
    clip = draw(st.booleans())
    scheduler = draw(st.booleans())
    comments = draw(st.booleans())
    blank = draw(st.booleans())
    # where the networks live: module code, a function building them, a function they are
    # passed into (under other names), a trainer object holding them
    scope = draw(st.sampled_from(["module", "function", "parameters", "trainer"]))
    # how the networks are built: real code chains `.to(device)` / `.train()` and wraps
    construction = draw(st.sampled_from(sorted(CONSTRUCTIONS)))
    # how the optimizers are kept: plain names, a dict, a list (indexed)
    held_in = draw(st.sampled_from(["names", "dict", "list"]))
    scheduler = scheduler and scope != "parameters"  # a global the function is not given
    unit = draw(st.sampled_from(["    ", "  "]))

    build = CONSTRUCTIONS[construction]
    setup = [
        f"{a} = {build.format('nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))')}",
        f"{b} = {build.format('nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))')}",
    ]
    if construction == "separate_statement":
        setup += [f"{a}.to('cpu')", f"{b} = {b}.to('cpu')"]
    setup += [
        f"{opt_a} = torch.optim.SGD({a}.parameters(), lr=0.1)",
        f"{opt_b} = torch.optim.SGD({b}.parameters(), lr=0.1)",
    ]
    if scheduler:
        setup.append(f"sched = torch.optim.lr_scheduler.StepLR({opt_a}, step_size=1)")
    forward = ["x = torch.randn(6, 4)", f"out_a = {a}(x)"]
    b_input = "out_a.detach()" if shape == "detached_for_b" else "out_a"
    # A's loss also goes through B (so B's graph is shared), except in the detached shape,
    # where sharing it would be a real LF003 bug (loopfix found that in an earlier draft).
    loss_a = (
        "out_a.pow(2).mean()" if shape == "detached_for_b" else "out_a.pow(2).mean() + out_b.mean()"
    )
    forward += [f"out_b = {b}({b_input})", f"loss_a = {loss_a}"]
    # Correct orders may carry a leftover retain_graph=True, which is then needless (LF004).
    leftover_retain = draw(st.booleans())
    retain = shape == "step_then_retained_backward" or (
        shape in ("dcgan_recompute_after_step", "detached_for_b") and leftover_retain
    )
    expected = SHAPES[shape]
    if shape in ("dcgan_recompute_after_step", "detached_for_b") and retain:
        expected = ("LF004",)
    a_update = [f"{opt_a}.zero_grad()"]
    if comments:
        a_update.insert(0, f"# update {a}")
    a_update.append(f"loss_a.backward({'retain_graph=True' if retain else ''})")
    if clip:
        a_update.append(f"torch.nn.utils.clip_grad_norm_({a}.parameters(), 1.0)")
    a_update.append(f"{opt_a}.step()")
    if scheduler:
        a_update.append("sched.step()")
    b_loss = "loss_b = out_b.pow(2).mean()"
    if shape == "dcgan_recompute_after_step":
        b_loss = f"loss_b = {b}({a}(x)).pow(2).mean()"
    b_update = [f"{opt_b}.zero_grad()", b_loss, "loss_b.backward()", f"{opt_b}.step()"]
    if comments:
        b_update.insert(0, f"# update {b}")
    if shape == "all_backwards_first":
        body = forward + [b_loss.replace(f"{b}({a}(x))", "out_b"), f"{opt_a}.zero_grad()",
                          f"{opt_b}.zero_grad()", "loss_a.backward(retain_graph=True, "
                          f"inputs=list({a}.parameters()))",
                          f"loss_b.backward(inputs=list({b}.parameters()))",
                          f"{opt_a}.step()", f"{opt_b}.step()"]  # fmt: skip
    else:
        body = forward + a_update + ([""] if blank else []) + b_update
    if held_in != "names":
        keys = ('"a"', '"b"') if held_in == "dict" else ("0", "1")
        opening, closing = ("{", "}") if held_in == "dict" else ("[", "]")
        items = [
            f"{k}: {o}" if held_in == "dict" else o
            for k, o in zip(keys, (opt_a, opt_b), strict=True)
        ]
        setup.append(f"opts = {opening}{', '.join(items)}{closing}")
        for name, key in ((opt_a, keys[0]), (opt_b, keys[1])):
            body = [re.sub(rf"\b{re.escape(name)}\.", f"opts[{key}].", line) for line in body]
    loop = [("for step in range(3):", body)]
    lines = ["import torch", "import torch.nn as nn", "", ""]
    if scope == "module":
        lines += render(setup + loop, 0, unit)
    elif scope == "function":
        lines += ["def train():"] + render(setup + loop, 1, unit) + ["", "", "train()"]
    elif scope == "parameters":
        held = ["opts"] if held_in != "names" else [opt_a, opt_b]
        params = ", ".join([a, b, *held])
        outer = [rename_line(line, "_net") for line in setup]
        call = ", ".join(f"{n}_net" for n in [a, b, *held])
        lines += [f"def train({params}):"] + render(loop, 1, unit) + ["", ""]
        lines += render(outer, 0, unit) + [f"train({call})"]
    else:  # a trainer object: the networks and optimizers on self, the loop in a method
        names_used = [a, b, opt_a, opt_b, "opts", "sched"]
        init = [on_self(line, names_used) for line in setup]
        method = [(header, [on_self(line, names_used) for line in inner]) for header, inner in loop]
        lines += ["class Trainer:"] + render([("def __init__(self):", init)], 1, unit)
        lines += [""] + render([("def fit(self):", method)], 1, unit)
        lines += ["", "", "Trainer().fit()"]
    text = "\n".join(line.rstrip() for line in lines) + "\n"
    description = (
        f"{shape} retain={retain} clip={clip} scheduler={scheduler} scope={scope} "
        f"construction={construction} held_in={held_in}"
    )
    return UpdateProgram(text, expected, description)
