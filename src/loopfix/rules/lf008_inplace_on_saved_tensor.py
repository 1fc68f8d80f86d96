"""LF008 inplace-on-saved-tensor: an in-place change of a tensor autograd saved for backward."""

from __future__ import annotations

import ast

from loopfix.edits import Edit
from loopfix.model.saved import IN_PLACE_METHODS, InPlaceChange
from loopfix.rules.base import FileContext, Finding, Fix, Rule

DOCS = """\
## What it does
Finds an in-place operation on a tensor that an earlier operation saved for its backward: the
result of `torch.sigmoid`/`tanh`/`exp`/`relu`/`softmax` changed by `out += residual`, a
slice write or an in-place activation; the input of a convolution, batch norm, trainable
`Linear`, `log`, `gelu`, ... changed after the call (`logits = self.fc(feat)` then
`F.relu(feat, inplace=True)`), a residual block adding the shortcut into what a ReLU kept, an
in-place view (`a.unsqueeze_(1)`, `x.transpose_(1, 2)`: only the shape changes, but the
version counter moves all the same). An `nn.Sequential` built from its layers' constructors
is followed layer by layer: it keeps what they keep (the input of a first convolution, the
result of a last ReLU or sigmoid) and changes its argument when its first layer is an
in-place activation or dropout, so `self.block2(self.block1(x))` with `block1` ending in
`nn.ReLU()` and `block2` starting with `nn.LeakyReLU(0.2, inplace=True)` is found, a tensor
without a name included. It
follows `forward` of the file's `nn.Module` classes and the methods it calls through `self`,
the methods and functions the training code calls (`model.compute_loss(x)`), and training code
itself, where a change counts only when a backward comes after it (not `generate()` or other
inference methods, nor what a loop computes for its log after its last backward), also
through an in-place module the class builds (`nn.LeakyReLU(0.2, inplace=True)`), a project
module whose `forward` changes its argument in place, and a project function or a method of
the class that does (`attn = self._drop_padding(attn, pad)`, `utils.clip_probs(p)`), when the
change is in the function's own body before it rebinds the argument (not inside a branch,
except `if mask is not None:` on a parameter that defaults to `None`, where the call passes
what is surely no `None`: `mask_probs(probs, mask)` with a `mask` the caller never binds to
`None` and that is not its own parameter defaulting to `None`).
A project module the code builds (`self.enc = Encoder()`, `encoder = Encoder()`) whose
`forward` ends with its only `return` of an operation that keeps its result (`return
self.net(x)` with `self.net` ending in `nn.Tanh()`, `return torch.sigmoid(h)`) keeps its
output as that operation does, when the module has weights of its own and is not frozen:
`code = encoder(x)` then `F.dropout(code, 0.1, inplace=True)` is found.

Reported only when it is proven: the operation ran on a tensor that requires grad (the output
of a trainable layer, or computed from one), the changed tensor is the one it saved (by name,
alias, view or `.detach()`, which share the version counter), and the operation's output is
read after the change, so a backward goes through it (in training code, by a later backward
whose loss is built from that read: an entropy of changed softmax probabilities computed only
for a metric is not). Which operations save which tensor is
from PyTorch's `tools/autograd/derivatives.yaml` and its layers' backward kernels (the table is
in `loopfix/model/saved.py`, each entry checked by running it in the test suite).

## Why is this bad?
autograd checks, before using a saved tensor, that its version has not changed since it was
saved; the backward fails with "one of the variables needed for gradient computation has been
modified by an inplace operation: [...] is at version 2; expected version 1". The traceback
points at `backward()`, never at the change.

## Example
```python
class Gate(nn.Module):
    def forward(self, x, residual):
        out = torch.sigmoid(self.fc(x))
        out += residual
        return out
```

Use instead:
```python
        out = torch.sigmoid(self.fc(x))
        out = out + residual
```

## What the fix preserves
The change is made out-of-place: `out = out + residual` for an augmented assignment,
`inplace=False` for an in-place activation (in the module's constructor, an `nn.Sequential`'s
layer's, or the call), `x = x.add(r)` for an in-place method (`a = a.unsqueeze(1)` for an
in-place view), `x = x.clone()` before a slice write, and `.clone()` after a tensor without a
name (`self.block2(self.block1(x).clone())`). The forward
computes the same values (the new tensor holds what the changed one held); the saved tensor
keeps the value the backward needs, so the gradients are those of the computation as written.
Verification runs the original (it must fail with the error), the patched code, and the
original with every saved tensor copied when it is saved (what out-of-place operations
throughout compute): every value the original recorded before failing must be the patched
run's, and every loss, gradient and step of the whole capped run must equal the reference's.

## Fix safety
Safe. No fix is offered for a change under `torch.no_grad()` (`probs.clamp_(min=1e-4)` to
keep a logarithm finite, which still fails the backward): out of place there the tensor would
carry no gradient, and outside the block the gradient would be the operation's; which one is
meant is the author's choice. No fix either when another name for the same tensor (an
alias or a view) is read after the change, or the tensor was put where names do not follow
it (an attribute, a list or dict, a tuple, a function's argument), since that copy would no
longer see the change.
No fix either when the statement that writes into the tensor also saves it (`hs[t + 1] =
torch.tanh(self.U(hs[t]))`, a view saved by `Linear`): a copy made before the statement
would be the one saved and written; the steps belong in a list passed to `torch.stack`.
`inplace=False` is used only when the call rebinds its argument to its result (`out =
self.relu(out)`) and a module so switched is called nowhere else; otherwise the tensor is
cloned before the change. A change to a wider dtype can differ in place
(`x += y` keeps `x`'s dtype); verification compares the values.

## Known problems
An `nn.Sequential` whose layers are not its constructor's calls (`nn.Sequential(*layers)`, an
`OrderedDict`, a shared `self.act`, layers appended or replaced later) is not followed, nor
are layers it does not know (a project module inside it ends the walk), nor a project
module's `forward` that returns what its last operation keeps: those changes are missed.

## References
- PyTorch docs, "Autograd mechanics: In-place operations with autograd"
- PyTorch `tools/autograd/derivatives.yaml`
"""

OPERATORS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
    ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|",
    ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
}  # fmt: skip
ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)


class InplaceOnSavedTensor(Rule):
    code = "LF008"
    name = "inplace-on-saved-tensor"
    summary = "An in-place operation changes a tensor autograd saved for the backward"
    docs = DOCS
    predicted_error = "modified by an inplace operation"

    def detect(self, context: FileContext) -> list[Finding]:
        findings = []
        for change in context.model.saved_tensor_changes():
            start, end = context.layout.node_range(change.node)
            saved_at = change.save.statement.lineno
            changed = f"the result of `{change.var}`" if change.unnamed else f"`{change.var}`"
            message = (
                f"{changed} is changed in place after {change.save.operation} for the "
                f"backward (line {saved_at}): the backward will fail with 'modified by an "
                "inplace operation'"
            )
            findings.append(Finding(self.code, self.name, message, start, end, detail=change))
        return findings

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        change: InPlaceChange = finding.detail
        if change.alias or change.kept_in:
            where = f"`{change.alias}`" if change.alias else change.kept_in
            finding.fix_unavailable = (
                f"{where} holds the same tensor as `{change.var}` (read after the change, or "
                "kept where loopfix cannot follow it): out of place, it would no longer see "
                "the change"
            )
            return None
        if change.without_grad:
            finding.fix_unavailable = (
                f"the change runs under `torch.no_grad()`: made out of place there, "
                f"`{change.var}` would carry no gradient at all; made outside the block, its "
                "gradient would be the operation's"
            )
            return None
        made = _out_of_place(context, change)
        if made is None:
            if change.saved_here:
                finding.fix_unavailable = (
                    f"this statement both saves `{change.var}` (a view of it) and writes into "
                    f"it: collect the steps in a list and `torch.stack` them instead"
                )
            return None
        title, edits = made
        if not context.proven(edits, lambda patched: self.removes(context, patched)):
            return None
        return Fix(title, tuple(edits))

    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        return self.removes(before, after, len(fixed))

    def needs_runs(self, finding: Finding) -> frozenset[str]:
        return frozenset({"cloned"})

    compares = (
        "every forward output and event the original ran before failing, then every loss, "
        "gradient and optimizer step against the original with every saved tensor copied"
    )

    def oracle(self, finding: Finding, runs) -> str:
        """The original fails with the error; the patched run records what the original did
        before failing, and then exactly what the original computes with every saved tensor
        copied when saved (out-of-place operations throughout)."""
        from loopfix.rules.compare import same_as_out_of_place

        return same_as_out_of_place(runs, self.predicted_error)


def _out_of_place(context: FileContext, change: InPlaceChange) -> tuple[str, list[Edit]] | None:
    statement, node, var, layout = change.statement, change.node, change.var, context.layout
    if change.how == "augmented" and type(node.op) in OPERATORS:
        return _augmented(context, node)
    if change.switch is not None and _in_file(context, change.switch):
        start, end = layout.node_range(change.switch)
        where = "the module's constructor" if change.how == "module" else "the call"
        return f"Pass `inplace=False` in {where}", [Edit(start, end, "False")]
    if change.unnamed is not None:  # `self.block2(self.block1(x).clone())`
        start, end = layout.node_range(change.unnamed)
        edits = [Edit(end, end, ".clone()")]
        if not isinstance(change.unnamed, ATOMS):
            edits = [Edit(start, start, "("), Edit(end, end, ").clone()")]
        return f"Clone the result of `{var}` before changing it in place", edits
    method = _method_statement(layout, statement, node, var)
    if method is not None:
        return method
    if not layout.stands_alone(statement) or change.saved_here:
        return None  # a clone before the statement would be the tensor it saves and changes
    clone = layout.insert_before(statement, [f"{var} = {var}.clone()"])
    return f"Clone `{var}` before changing it in place", [clone]


def _augmented(context: FileContext, node: ast.AugAssign) -> tuple[str, list[Edit]]:
    """`out += r` -> `out = out + r` (the value parenthesised unless it is an atom)."""
    layout, target = context.layout, node.target.id
    symbol = OPERATORS[type(node.op)]
    _, target_end = layout.node_range(node.target)
    value_start, value_end = layout.node_range(node.value)
    between = context.text[target_end:value_start]
    operator_at = target_end + between.index(symbol + "=")
    edits = [Edit(operator_at, operator_at + len(symbol) + 1, f"= {target} {symbol}")]
    value = context.text[value_start:value_end]
    if not isinstance(node.value, ATOMS):
        edits += [Edit(value_start, value_start, "("), Edit(value_end, value_end, ")")]
        value = f"({value})"
    return f"Use the out-of-place `{target} = {target} {symbol} {value}`", edits


def _method_statement(layout, statement, node, var) -> tuple[str, list[Edit]] | None:
    """`x.clamp_(0, 1)` standing as a statement -> `x = x.clamp(0, 1)`."""
    func = node.func if isinstance(node, ast.Call) else None
    if not (
        isinstance(statement, ast.Expr)
        and statement.value is node
        and isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id == var
        and IN_PLACE_METHODS.get(func.attr)
    ):
        return None
    out_of_place = IN_PLACE_METHODS[func.attr]
    start, _ = layout.node_range(statement)
    _, attr_end = layout.node_range(func)
    edits = [
        Edit(start, start, f"{var} = "),
        Edit(attr_end - len(func.attr), attr_end, out_of_place),
    ]
    return f"Use the out-of-place `{var} = {var}.{out_of_place}(...)`", edits


def _in_file(context: FileContext, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(context.tree))
