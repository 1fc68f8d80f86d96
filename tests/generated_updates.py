"""A hypothesis strategy for small two-model training loops, correct or with an update bug."""

from __future__ import annotations

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
    scope = draw(st.sampled_from(["module", "function"]))
    unit = draw(st.sampled_from(["    ", "  "]))

    setup = [
        f"{a} = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 4))",
        f"{b} = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))",
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
    loop = [("for step in range(3):", body)]
    lines = ["import torch", "import torch.nn as nn", "", ""]
    if scope == "module":
        lines += render(setup + loop, 0, unit)
    else:
        lines += ["def train():"] + render(setup + loop, 1, unit) + ["", "", "train()"]
    text = "\n".join(line.rstrip() for line in lines) + "\n"
    description = f"{shape} retain={retain} clip={clip} scheduler={scheduler} scope={scope}"
    return UpdateProgram(text, expected, description)
