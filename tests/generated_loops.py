"""A hypothesis strategy for small, runnable recurrent training loops, buggy or already fixed."""

from __future__ import annotations

import keyword
from dataclasses import dataclass

from hypothesis import strategies as st

RESERVED = {
    "torch", "nn", "rnn", "head", "opt", "x", "out", "loss", "epoch", "step", "s", "t",
    "layer", "item", "self", "train", "Trainer", "detach_state", "state", "run", "range",
    "print", "tuple", "list", "None", "True", "False", "steps",
}  # fmt: skip

names = st.from_regex(r"[a-z][a-z0-9_]{0,7}", fullmatch=True).filter(
    lambda n: not keyword.iskeyword(n) and n not in RESERVED
)

MODULES = {
    "LSTM": ("nn.LSTM(3, 4)", "out, {v} = rnn(x, {v})", "out", "tuple", "{v}[0].sum()"),
    "GRU": ("nn.GRU(3, 4)", "out, {v} = rnn(x, {v})", "out", "tensor", "{v}.sum()"),
    "LSTMCell": ("nn.LSTMCell(3, 4)", "{v} = rnn(x[0], {v})", "{v}[0]", "tuple", "{v}[1].sum()"),
}


@dataclass(frozen=True)
class Program:
    text: str
    buggy: bool
    description: str
    expected_rules: tuple[str, ...] = ()


@st.composite
def programs(draw) -> Program:
    var = draw(names)
    kind = draw(st.sampled_from(sorted(MODULES)))
    scope = draw(st.sampled_from(["module", "function", "method"]))
    loop = draw(st.sampled_from(["for", "while"]))
    per_epoch = draw(st.booleans())
    start_none = draw(st.booleans())
    feeds_loss = draw(st.booleans())
    retain = draw(st.booleans())
    already_fixed = draw(st.booleans())
    comment = draw(st.booleans())
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    final_newline = draw(st.booleans())

    module, call, output, shape, state_term = MODULES[kind]
    batch = 2
    if start_none:
        init = "None"
    elif shape == "tuple":
        size = "(1, 2, 4)" if kind == "LSTM" else f"({batch}, 4)"
        init = f"(torch.zeros{size}, torch.zeros{size})"
    else:
        init = "torch.zeros(1, 2, 4)"
    detach = (
        f"{var} = tuple(s.detach() for s in {var})"
        if shape == "tuple"
        else (f"{var} = {var}.detach()")
    )
    loss = f"loss = head({output.format(v=var)}).pow(2).mean()"
    if feeds_loss:
        loss += f" + 0.01 * {state_term.format(v=var)}"
    body = ["x = torch.randn(5, 2, 3)", call.format(v=var)]
    if comment:
        body.insert(1, "# forward pass; the state goes in and comes out")
    if already_fixed and not feeds_loss:
        body.append(detach)
    body += [
        loss,
        "opt.zero_grad()",
        "loss.backward(retain_graph=True)" if retain else "loss.backward()  # backprop",
        "opt.step()",
    ]
    if already_fixed and feeds_loss:
        body.append(detach)
    if loop == "for":
        inner = [("for step in range(3):", body)]
    else:
        inner = [("step = 0", None), ("while step < 3:", body + ["step += 1"])]
    epoch_body = ([(f"{var} = {init}", None)] if per_epoch else []) + inner
    training = ([] if per_epoch else [(f"{var} = {init}", None)]) + [
        ("for epoch in range(2):", epoch_body)
    ]
    setup = [
        ("rnn = " + module, None),
        ("head = nn.Linear(4, 1)", None),
        ("opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)", None),
    ]
    lines = ["import torch", "import torch.nn as nn", "", ""]
    if scope == "module":
        lines += render(setup + training, 0, unit)
    elif scope == "function":
        lines += ["def train():"] + render(setup + training, 1, unit)
        lines += ["", "", "train()"]
    else:
        lines += ["class Trainer:", f"{unit}def run(self):"]
        lines += render(setup + training, 2, unit) + ["", "", "Trainer().run()"]
    text = newline.join(lines) + (newline if final_newline else "")
    description = (
        f"{kind} {scope} {loop} per_epoch={per_epoch} none={start_none} "
        f"feeds={feeds_loss} retain={retain} fixed={already_fixed}"
    )
    # A loop that detaches its state but keeps retain_graph=True has a needless retain (LF004);
    # in a buggy loop the retain serves the carried state and LF001's fix removes it.
    expected = ("LF001",) if not already_fixed else ("LF004",) if retain else ()
    return Program(text, not already_fixed, description, expected)


def render(statements, depth: int, unit: str) -> list[str]:
    lines = []
    for statement in statements:
        header, block = statement if isinstance(statement, tuple) else (statement, None)
        lines.append(unit * depth + header)
        if block is not None:
            lines += render(block, depth + 1, unit)
    return lines
