"""Synthetic data for a script whose loop reads data the harness cannot materialise.

Used only inside a verification child (`trace.py --synthetic-loop LINE`). The script's
module-level statements before the loop on LINE are guarded: one that fails with a data-access
error (a missing file, no network), or that needs a name such a statement could not bind, is
skipped and its names become `Unavailable`. The loop's iterable, if unavailable, is replaced
by batches shaped for the model actually built at run time:

- the input from the first layer of the first module the loop body calls: `Embedding` gives
  integer ids within its vocabulary, `LSTM` / `GRU` / `RNN` give `[T, B, F]` (or batch-first),
  `Linear` gives `[B, F]`, `Conv1d` / `Conv2d` give `[B, C, L]` / `[B, C, H, W]`;
- the target, when the loop unpacks two values: class indices for cross-entropy or NLL losses
  (as many classes as the output's last dimension), otherwise a tensor shaped like the output.
"""

from __future__ import annotations

import ast
import re

import torch

DATA_ERRORS = (OSError, EOFError)  # FileNotFoundError, PermissionError, URLError, ...
BATCH, STEPS, BATCHES = 4, 5, 16


class Unavailable:
    """A value the script could not build here (its data is not on this machine)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"<unavailable: {self.reason}>"


def is_data_error(error: BaseException) -> bool:
    if isinstance(error, DATA_ERRORS):
        return True
    return isinstance(error, RuntimeError) and bool(
        re.search(r"not found|download|no such file", str(error), re.I)
    )


def instrument(source: str, loop_line: int, filename: str):
    """The script's code, with the statements before the loop guarded and the loop fed."""
    tree = ast.parse(source, filename)
    index = next(
        (i for i, s in enumerate(tree.body) if s.lineno <= loop_line <= s.end_lineno), None
    )
    if index is None or not isinstance(tree.body[index], ast.For):
        raise ValueError(f"no module-level for loop at line {loop_line}")
    loop = tree.body[index]
    body = [_guarded(s) for s in tree.body[:index]] + [_fed(loop)] + tree.body[index + 1 :]
    tree.body = body
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")


def _guarded(statement: ast.stmt) -> ast.stmt:
    if isinstance(statement, ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef):
        return statement
    reads = sorted({n.id for n in ast.walk(statement) if isinstance(n, ast.Name)})
    writes = sorted(
        {
            n.id
            for n in ast.walk(statement)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
    )
    code = (
        f"if __loopfix_synthetic__.blocked(globals(), {reads!r}):\n"
        f"    __loopfix_synthetic__.mark(globals(), {writes!r}, 'depends on unavailable data')\n"
        "else:\n"
        "    try:\n"
        "        pass\n"
        "    except BaseException as __loopfix_error__:\n"
        "        if not __loopfix_synthetic__.is_data_error(__loopfix_error__):\n"
        "            raise\n"
        f"        __loopfix_synthetic__.mark(globals(), {writes!r}, repr(__loopfix_error__))\n"
    )
    guard = ast.parse(code).body[0]
    guard.orelse[0].body = [statement]
    return ast.copy_location(guard, statement)


def _fed(loop: ast.For) -> ast.For:
    targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    calls = sorted(
        (
            n
            for n in ast.walk(ast.Module(body=loop.body, type_ignores=[]))
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name | ast.Attribute)
        ),
        key=lambda n: (n.lineno, n.col_offset),
    )
    # The module that takes the loop's input directly is the one to shape the batch for.
    feeds = [c for c in calls if any(isinstance(a, ast.Name) and a.id in targets for a in c.args)]
    callees = [ast.unparse(c.func) for c in feeds + calls]
    unpack = len(loop.target.elts) if isinstance(loop.target, ast.Tuple) else 1
    classes = bool(re.search(r"cross_entropy|CrossEntropyLoss|nll_loss|NLLLoss", ast.unparse(loop)))
    arguments = f"lambda: None, globals(), {callees!r}, {unpack}, {classes}"
    call = ast.parse(f"__loopfix_synthetic__.batches({arguments})").body[0].value
    call.args[0].body = loop.iter
    loop.iter = call
    return loop


def blocked(namespace: dict, names: list[str]) -> bool:
    return any(isinstance(namespace.get(name), Unavailable) for name in names)


def mark(namespace: dict, names: list[str], reason: str) -> None:
    for name in names:
        namespace[name] = Unavailable(reason)


def batches(make_iterable, namespace: dict, callees: list[str], unpack: int, classes: bool):
    """The loop's own iterable when it can be built, else synthetic batches."""
    try:
        iterable = make_iterable()
    except Exception as error:
        if not is_data_error(error):
            raise
        iterable = Unavailable(repr(error))
    if not isinstance(iterable, Unavailable):
        return iterable
    model = _first_module(namespace, callees)
    if model is None:
        raise RuntimeError("loopfix: no model to shape synthetic data for")
    return list(_synthetic(model, unpack, classes))


def _first_module(namespace: dict, callees: list[str]):
    for callee in callees:
        value = namespace.get(callee.split(".")[0])
        for part in callee.split(".")[1:]:
            value = getattr(value, part, None)
        if isinstance(value, torch.nn.Module) and any(True for _ in value.parameters()):
            return value
    return None


def _synthetic(model: torch.nn.Module, unpack: int, classes: bool):
    generator = torch.Generator().manual_seed(0)
    layer = next(m for m in model.modules() if not list(m.children()))
    for _ in range(BATCHES):
        x = _input_for(layer, generator)
        if unpack == 1:
            yield x
            continue
        with torch.no_grad():
            output = model(x)
        output = output[0] if isinstance(output, tuple | list) else output
        if classes:
            y = torch.randint(0, output.shape[-1], output.shape[:-1], generator=generator)
        else:
            y = torch.randn(output.shape, generator=generator)
        yield (x, y) if unpack == 2 else (x, y, *[None] * (unpack - 2))


def _input_for(layer: torch.nn.Module, generator: torch.Generator) -> torch.Tensor:
    if isinstance(layer, torch.nn.Embedding):
        return torch.randint(0, layer.num_embeddings, (STEPS, BATCH), generator=generator)
    if isinstance(layer, torch.nn.RNNBase):
        shape = (BATCH, STEPS) if layer.batch_first else (STEPS, BATCH)
        return torch.randn((*shape, layer.input_size), generator=generator)
    if isinstance(layer, torch.nn.Conv2d):
        return torch.randn((BATCH, layer.in_channels, 16, 16), generator=generator)
    if isinstance(layer, torch.nn.Conv1d):
        return torch.randn((BATCH, layer.in_channels, 16), generator=generator)
    if isinstance(layer, torch.nn.Linear):
        return torch.randn((BATCH, layer.in_features), generator=generator)
    raise RuntimeError(f"loopfix: cannot shape synthetic input for {type(layer).__name__}")
