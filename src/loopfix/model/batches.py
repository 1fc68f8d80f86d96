"""Where a loop's batches come from: one stream cut into consecutive pieces, or independent
batches. LF001 asks this to choose between detaching a recurrent state (keep its values: the
next batch continues the sequence) and resetting it (each batch starts afresh).

Evidence, from the loop and its function only (no data is read):
- a stream: the body slices or indexes a tensor with the loop's counter (`data[i : i + bptt]`,
  `get_batch(source, i)` in a `range(0, n, step)` loop), or the loop walks the pieces of one
  tensor (`x.split(k)`, `x.chunk(n)`, `torch.split(x, k)`);
- independent batches: the loop walks a `DataLoader(..., shuffle=True)` (directly, through
  `enumerate`, `zip` or a progress bar), or a `RandomSampler`'s loader.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from loopfix.model.index import walk
from loopfix.model.symbols import dotted_name

STREAM_PIECES = {"split", "chunk", "unbind"}
WRAPPERS = {"enumerate", "tqdm", "zip", "iter", "trange", "track"}


@dataclass(frozen=True)
class BatchSource:
    kind: str  # "stream" | "independent"
    evidence: str  # for the finding's message


def batch_source(loop: ast.AST, scope: ast.AST) -> BatchSource | None:
    """What the loop's batches are, from the code's evidence; None when it does not say.
    `scope` is the function (or module) holding the loop, where its loader was built."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return None
    counter = loop.target.id if isinstance(loop.target, ast.Name) else None
    pieces = _walked_pieces(loop.iter)
    if pieces is not None:
        return BatchSource("stream", f"the loop walks the pieces of `{pieces}`")
    if counter is not None and _is_range(loop.iter):
        sliced = _sliced_by(loop.body, counter)
        if sliced is not None:
            return BatchSource("stream", f"each batch is `{sliced}`, consecutive in one sequence")
    loader = _loader_name(loop.iter)
    if loader is not None and _shuffled_loader(scope, loader):
        return BatchSource("independent", f"`{loader}` is a DataLoader with shuffle=True")
    return None


def _is_range(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and dotted_name(node.func) == "range"


def _walked_pieces(node: ast.expr) -> str | None:
    while isinstance(node, ast.Call) and dotted_name(node.func) in WRAPPERS and node.args:
        node = node.args[0]
    if not isinstance(node, ast.Call):
        return None
    name = dotted_name(node.func) or ""
    if isinstance(node.func, ast.Attribute) and node.func.attr in STREAM_PIECES:
        if name.startswith("torch.") and node.args:
            return ast.unparse(node.args[0])
        return ast.unparse(node.func.value)
    return None


def _sliced_by(body: list[ast.stmt], counter: str) -> str | None:
    """`data[i : i + n]` or `get_batch(data, i)` somewhere in the body."""
    for statement in body:
        for node in walk(statement):
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
                lower = node.slice.lower
                if lower is not None and _reads(lower, counter):
                    return ast.unparse(node)
            if _batch_getter(node, counter):
                return ast.unparse(node)
    return None


def _batch_getter(node: ast.AST, counter: str) -> bool:
    """`get_batch(source, i)`: a batch-named function given the counter after the data."""
    if not isinstance(node, ast.Call) or "batch" not in (dotted_name(node.func) or "").lower():
        return False
    return any(isinstance(a, ast.Name) and a.id == counter for a in node.args[1:])


def _reads(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in walk(node))


def _loader_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Call) and dotted_name(node.func) in WRAPPERS and node.args:
        node = node.args[0]
    return dotted_name(node)


def _shuffled_loader(scope: ast.AST, loader: str) -> bool:
    """`loader = DataLoader(..., shuffle=True)` (or with a RandomSampler) in the scope."""
    for node in walk(scope):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        if not any(dotted_name(t) == loader for t in node.targets):
            continue
        call = node.value
        if not (dotted_name(call.func) or "").endswith("DataLoader"):
            continue
        for keyword in call.keywords:
            value = keyword.value
            if keyword.arg == "shuffle" and isinstance(value, ast.Constant) and value.value:
                return True
            if keyword.arg == "sampler" and "RandomSampler" in ast.unparse(value):
                return True
    return False
