"""Synthetic data for a script whose loop reads data the harness cannot materialise.

Used only inside a verification child (`trace.py --synthetic-loop LINE`). The statements
before the loop on LINE (at module level, in the `__main__` block, or in the function or method
that holds it) are guarded: one that
fails with a data-access error (a missing file, no network), or that needs a name such a
statement could not bind, is skipped and its names become `Unavailable`. Every `for` in that
loop (a batch loop inside an epoch loop, say) whose iterable is unavailable gets batches shaped
for the model actually built at run time instead:

- the input from the first layer of the first module the loop body calls: `Embedding` gives
  integer ids within its vocabulary, `LSTM` / `GRU` / `RNN` give `[T, B, F]` (or batch-first),
  `Linear` gives `[B, F]`, `Conv1d` / `Conv2d` give `[B, C, L]` / `[B, C, H, W]`;
- the target, when the loop unpacks two values, sized by the last `Linear` the loop calls:
  class indices for cross-entropy or NLL losses (per token when the loop flattens its
  predictions with `view(-1, ...)` / `reshape(-1, ...)`, else per example), otherwise a
  `[B, width]` regression target.
"""

from __future__ import annotations

import ast
import re

import torch

from loopfix.verify.units import block_holding

DATA_ERRORS = (OSError, EOFError)  # FileNotFoundError, PermissionError, URLError, ...
BATCH, STEPS, BATCHES = 4, 5, 16


class Unavailable:
    """A value the script could not build here (its data is not on this machine)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"<unavailable: {self.reason}>"


# a statement that checks for its data (`assert os.path.exists(path)`, `if not
# os.path.isdir(root): sys.exit(...)`): its AssertionError or SystemExit means missing data
PATH_CHECKS = re.compile(r"\b(exists|isfile|isdir|glob|listdir)\(")


def is_data_error(error: BaseException, checks_data: bool = False) -> bool:
    """Whether `error` means the data is not on this machine: a file or network error, a
    "not found" / "download" error, or the AssertionError / SystemExit of a statement that
    checks for its data (`checks_data`)."""
    if isinstance(error, DATA_ERRORS):
        return True
    if checks_data and isinstance(error, AssertionError | SystemExit):
        return True
    return isinstance(error, RuntimeError) and bool(
        re.search(r"not found|download|no such file", str(error), re.I)
    )


def instrument(source: str, loop_line: int, filename: str):
    """The script's code, with the statements before the loop guarded and its loops fed.

    The loop on `loop_line` is a `for` at the top of the module, of its
    `if __name__ == "__main__":` block, or of a function or method; every `for` within it (an
    epoch loop around a batch loop) is fed, each only when its own iterable cannot be built."""
    tree = ast.parse(source, filename)
    block = block_holding(tree, loop_line)
    if block is None:
        raise ValueError(f"no loop at the top of a block at line {loop_line}")
    index = next(i for i, s in enumerate(block) if s.lineno <= loop_line <= s.end_lineno)
    loop = block[index]
    arrays = _indexed_arrays(loop, block[:index])
    for node in ast.walk(loop):
        if isinstance(node, ast.For):
            _feed(node)
    streams = _next_streams(loop, block[:index])
    guarded = [_guarded(s) for s in block[:index]]
    made = [_materialised(loop, arrays)] if arrays else []
    made += [_streamed(loop, name, unpack) for name, unpack in streams]
    block[:index] = guarded + made
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")


def _indexed_arrays(loop: ast.stmt, before: list[ast.stmt]) -> list[str]:
    """Names bound before the loop that its body indexes (`X[idx]`, `data[i : i + bs]`), in
    order of first use: the data arrays a loop over indices reads its batches from."""
    bound = {n.id for s in before for n in ast.walk(s) if isinstance(n, ast.Name)}
    found: list[str] = []
    for node in sorted(
        (n for n in ast.walk(loop) if isinstance(n, ast.Subscript)),
        key=lambda n: (n.lineno, n.col_offset),
    ):
        name = node.value.id if isinstance(node.value, ast.Name) else None
        if name in bound and name not in found and isinstance(node.ctx, ast.Load):
            found.append(name)
    return found


def _next_streams(loop: ast.stmt, before: list[ast.stmt]) -> list[tuple[str, int]]:
    """Iterators bound before the loop that its body draws batches from with `next(it)`,
    with how many values each batch unpacks into (`x, y = next(it)`: 2)."""
    bound = {n.id for s in before for n in ast.walk(s) if isinstance(n, ast.Name)}
    found: dict[str, int] = {}
    for node in ast.walk(loop):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        if not (isinstance(call.func, ast.Name) and call.func.id == "next" and call.args):
            continue
        source = call.args[0]
        if isinstance(source, ast.Name) and source.id in bound:
            target = node.targets[0]
            found.setdefault(source.id, len(target.elts) if isinstance(target, ast.Tuple) else 1)
    return list(found.items())


def _streamed(loop: ast.stmt, name: str, unpack: int) -> ast.stmt:
    """`it = __loopfix_synthetic__.stream(...)`, run only when `it` is unavailable."""
    callees, labels = _callees_and_labels(loop)
    code = (
        f"if __loopfix_synthetic__.blocked({{**globals(), **locals()}}, [{name!r}]):\n"
        f"    {name} = __loopfix_synthetic__.stream({{**globals(), **locals()}}, {callees!r}, "
        f"{unpack}, {labels!r})\n"
    )
    return ast.copy_location(ast.parse(code).body[0], loop)


def _callees_and_labels(loop: ast.stmt) -> tuple[list[str], str | None]:
    text = ast.unparse(loop)
    calls = sorted(
        (n for n in ast.walk(loop) if isinstance(n, ast.Call)),
        key=lambda n: (n.lineno, n.col_offset),
    )
    callees = [ast.unparse(c.func) for c in calls if isinstance(c.func, ast.Name | ast.Attribute)]
    classes = bool(re.search(r"cross_entropy|CrossEntropyLoss|nll_loss|NLLLoss", text))
    return callees, "examples" if classes else None


def _materialised(loop: ast.stmt, names: list[str]) -> ast.stmt:
    """`X, y = __loopfix_synthetic__.arrays(...)`, run only when those arrays are
    unavailable: the first becomes inputs for the loop's first model, the others targets."""
    callees, labels = _callees_and_labels(loop)
    targets = ", ".join(names) + ("," if len(names) == 1 else "")
    code = (
        f"if __loopfix_synthetic__.blocked({{**globals(), **locals()}}, {names!r}):\n"
        f"    {targets} = __loopfix_synthetic__.arrays({{**globals(), **locals()}}, "
        f"{len(names)}, {callees!r}, {labels!r})\n"
    )
    return ast.copy_location(ast.parse(code).body[0], loop)


def _guarded(statement: ast.stmt) -> ast.stmt:
    """`statement`, skipped when it reads an unavailable name or fails for want of data; the
    names it would bind are then bound to `Unavailable`. Plain assignments, so the guard works
    at module level and inside a function alike."""
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

    def unavailable(reason: str) -> str:
        if not writes:
            return "pass"
        return " = ".join(writes) + f" = __loopfix_synthetic__.Unavailable({reason})"

    checks_data = bool(PATH_CHECKS.search(ast.unparse(statement)))
    code = (
        f"if __loopfix_synthetic__.blocked({{**globals(), **locals()}}, {reads!r}):\n"
        f"    {unavailable(repr('depends on unavailable data'))}\n"
        "else:\n"
        "    try:\n"
        "        pass\n"
        "    except BaseException as __loopfix_error__:\n"
        "        if not __loopfix_synthetic__.is_data_error(__loopfix_error__, "
        f"{checks_data}):\n"
        "            raise\n"
        f"        {unavailable('repr(__loopfix_error__)')}\n"
    )
    guard = ast.parse(code).body[0]
    guard.orelse[0].body = [statement]
    return ast.copy_location(guard, statement)


def _feed(loop: ast.For) -> None:
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
    # `enumerate(tqdm(loader))`: feed the loader, keep the counting, drop the progress bar
    iterable, target, counted = _peeled(loop.iter, loop.target)
    text = ast.unparse(loop)
    classes = bool(re.search(r"cross_entropy|CrossEntropyLoss|nll_loss|NLLLoss", text))
    # class labels per token when the loop flattens its predictions, else one per example
    labels = None
    if classes:
        labels = "tokens" if re.search(r"(view|reshape)\(-1|flatten\(", text) else "examples"
    zipped = (
        isinstance(iterable, ast.Call)
        and ast.unparse(iterable.func) == "zip"
        and isinstance(target, ast.Tuple)
        and len(target.elts) == len(iterable.args)
        and not iterable.keywords
    )
    if zipped:  # `zip(labeled, unlabeled)`: each loader fed for its own part of the target
        iterable.args = [
            _batches_call(arg, part, callees, labels)
            for arg, part in zip(iterable.args, target.elts, strict=True)
        ]
        fed = iterable
    else:
        fed = _batches_call(iterable, target, callees, labels)
    loop.iter = ast.Call(ast.Name("enumerate", ast.Load()), [fed], []) if counted else fed


def _batches_call(iterable: ast.expr, target: ast.expr, callees: list[str], labels) -> ast.Call:
    """`__loopfix_synthetic__.batches(lambda: <iterable>, ...)` for a loop target."""
    unpack = len(target.elts) if isinstance(target, ast.Tuple) else 1
    reads = sorted({n.id for n in ast.walk(iterable) if isinstance(n, ast.Name)})
    arguments = (
        f"lambda: None, {{**globals(), **locals()}}, {callees!r}, {unpack}, {labels!r}, {reads!r}"
    )
    call = ast.parse(f"__loopfix_synthetic__.batches({arguments})").body[0].value
    call.args[0].body = iterable
    return call


def _peeled(iterable: ast.expr, target: ast.expr) -> tuple[ast.expr, ast.expr, bool]:
    """The data inside progress bars and one `enumerate`, the loop target for one batch, and
    whether the loop counts its batches."""
    counted = False
    while isinstance(iterable, ast.Call) and iterable.args:
        name = ast.unparse(iterable.func).rpartition(".")[2]
        if name in ("tqdm", "track", "iter"):
            iterable = iterable.args[0]
        elif name == "enumerate" and not counted and isinstance(target, ast.Tuple):
            if len(target.elts) != 2:
                break
            iterable, target, counted = iterable.args[0], target.elts[1], True
        else:
            break
    return iterable, target, counted


def blocked(namespace: dict, names: list[str]) -> bool:
    return any(isinstance(namespace.get(name), Unavailable) for name in names)


def batches(make_iterable, namespace: dict, callees: list[str], unpack: int, labels, reads=()):
    """The loop's own iterable when it can be built, else synthetic batches. Failing on a
    name that is `Unavailable` (`enumerate(tqdm(loader))` of a loader that could not be
    built) counts as unavailable too."""
    try:
        iterable = make_iterable()
    except Exception as error:
        if not (is_data_error(error) or blocked(namespace, list(reads))):
            raise
        iterable = Unavailable(repr(error))
    if not isinstance(iterable, Unavailable):
        return iterable
    modules = _modules(namespace, callees)
    if not modules:
        raise RuntimeError("loopfix: no model to shape synthetic data for")
    return list(_synthetic(modules, unpack, labels))


ROWS = BATCH * BATCHES  # rows of a synthetic data array


def stream(namespace: dict, callees: list[str], unpack: int, labels):
    """An endless iterator of synthetic batches for `next(it)` inside the loop."""
    import itertools

    modules = _modules(namespace, callees)
    if not modules:
        raise RuntimeError("loopfix: no model to shape synthetic data for")
    return itertools.cycle(list(_synthetic(modules, unpack, labels)))


def arrays(namespace: dict, count: int, callees: list[str], labels) -> tuple:
    """Synthetic data arrays for a loop that indexes its batches out of them: `ROWS` inputs
    shaped for the loop's first model, and targets for its prediction (class indices when the
    loop's loss takes classes, else the prediction's shape)."""
    modules = _modules(namespace, callees)
    if not modules:
        raise RuntimeError("loopfix: no model to shape synthetic data for")
    generator = torch.Generator().manual_seed(0)
    first = next(m for m in modules[0].modules() if not list(m.children()))
    x = _input_for(first, generator, batch=ROWS)
    if count == 1:
        return (x,)
    y = _target_like(_chained_output(modules, x), labels, generator)
    return (x, *[y] * (count - 1))


def _modules(namespace: dict, callees: list[str]) -> list[torch.nn.Module]:
    """The modules with parameters that the loop body calls: the input's first, in order."""
    found = []
    for callee in callees:
        value = namespace.get(callee.split(".")[0])
        for part in callee.split(".")[1:]:
            value = getattr(value, part, None)
        is_model = isinstance(value, torch.nn.Module) and any(True for _ in value.parameters())
        if is_model and all(value is not m for m in found):
            found.append(value)
    return found


def _synthetic(modules: list[torch.nn.Module], unpack: int, labels: str | None):
    """Batches for the first module; targets sized by the last `Linear` the loop calls."""
    generator = torch.Generator().manual_seed(0)
    first = next(m for m in modules[0].modules() if not list(m.children()))
    last = _last_linear(modules)
    for _ in range(BATCHES):
        x = _input_for(first, generator)
        if unpack == 1:
            yield x
            continue
        if last is None:  # a convolutional model: the target takes the output's shape
            y = _target_like(_chained_output(modules, x), labels, generator)
            yield (x, y) if unpack == 2 else (x, y, *[None] * (unpack - 2))
            continue
        width = last.out_features
        per_step = x.shape[:2] if isinstance(first, torch.nn.Embedding | torch.nn.RNNBase) else None
        leading = per_step if labels == "tokens" and per_step is not None else (x.shape[0],)
        if isinstance(first, torch.nn.Embedding | torch.nn.RNNBase) and labels != "tokens":
            batch_first = getattr(first, "batch_first", False)
            leading = (x.shape[0] if batch_first else x.shape[1],)
        if labels:
            y = torch.randint(0, width, leading, generator=generator)
        else:
            y = torch.randn((*leading, width), generator=generator)
        yield (x, y) if unpack == 2 else (x, y, *[None] * (unpack - 2))


def _last_linear(modules: list[torch.nn.Module]) -> torch.nn.Linear | None:
    linears = [m for module in modules for m in module.modules() if isinstance(m, torch.nn.Linear)]
    return linears[-1] if linears else None


def _chained_output(modules: list[torch.nn.Module], x: torch.Tensor) -> torch.Tensor:
    """The prediction: the loop's modules applied in the order it calls them, each to the
    previous one's output, as far as the shapes allow (an encoder, then its head)."""
    output = x
    with torch.no_grad():
        for module in modules:
            try:
                result = module(output)
            except Exception:  # not the next stage of this prediction
                break
            output = result[0] if isinstance(result, tuple | list) else result
    return output


def _target_like(output: torch.Tensor, labels: str | None, generator) -> torch.Tensor:
    """A target the loss can compare with `output`: the same shape for a regression
    (reconstruction, super-resolution, a depth map), else class indices per example or, for
    an image-shaped output `[B, C, H, W]`, per pixel (segmentation)."""
    if not labels:
        return torch.randn(output.shape, generator=generator)
    classes = output.shape[1] if output.dim() > 2 else output.shape[-1]
    leading = (output.shape[0], *output.shape[2:]) if output.dim() > 2 else (output.shape[0],)
    return torch.randint(0, classes, leading, generator=generator)


def _input_for(
    layer: torch.nn.Module, generator: torch.Generator, batch: int = BATCH
) -> torch.Tensor:
    if isinstance(layer, torch.nn.Embedding):
        return torch.randint(0, layer.num_embeddings, (STEPS, batch), generator=generator)
    if isinstance(layer, torch.nn.RNNBase):
        shape = (batch, STEPS) if layer.batch_first else (STEPS, batch)
        return torch.randn((*shape, layer.input_size), generator=generator)
    if isinstance(layer, torch.nn.Conv2d):
        return torch.randn((batch, layer.in_channels, 16, 16), generator=generator)
    if isinstance(layer, torch.nn.Conv1d):
        return torch.randn((batch, layer.in_channels, 16), generator=generator)
    if isinstance(layer, torch.nn.Linear):
        return torch.randn((batch, layer.in_features), generator=generator)
    raise RuntimeError(f"loopfix: cannot shape synthetic input for {type(layer).__name__}")


# ------------------------------------------------------------------ synthetic weights
CHECKPOINT_WORDS = ("ckpt", "checkpoint", "weight", "pretrain", "model", "best", "last", "epoch")
CHECKPOINT_SUFFIXES = (".pth", ".ckpt", ".bin", ".tar")


class SyntheticState(dict):
    """Stands for pretrained weights that are not on this machine, or must not be fetched:
    loading it into a module or an optimizer keeps what it has (the seeded initialisation, the
    same in the original and the patched run). Any key of it is another stand-in, so that
    `checkpoint["model"]` loads as nothing too."""

    def __missing__(self, key):
        return SyntheticState()


class SyntheticWeights:
    """Installed in a verification child before user code: downloads of pretrained weights
    (`torch.hub.load_state_dict_from_url`, `torch.utils.model_zoo.load_url`, and torchvision's
    `pretrained=True` / `weights=...`, which go through it) and `torch.load` of a checkpoint
    path that does not exist give a `SyntheticState`; `used` says whether any did (the verdict
    then says "synthetic weights"). A missing path that does not look like a checkpoint (no
    `.pth`/`.ckpt`/`.bin`/`.tar` suffix, no word such as "checkpoint", "model" or "best" in
    its name) still raises, and counts as missing data."""

    def __init__(self) -> None:
        self.used = False

    def install(self) -> None:
        import torch.hub
        import torch.utils.model_zoo

        original_load = torch.load
        module_load = torch.nn.Module.load_state_dict
        optimizer_load = torch.optim.Optimizer.load_state_dict

        def download(*args, **kwargs):
            self.used = True
            return SyntheticState()

        def load(f, *args, **kwargs):
            if _missing_checkpoint(f):
                self.used = True
                return SyntheticState()
            return original_load(f, *args, **kwargs)

        def load_into_module(module, state_dict, *args, **kwargs):
            if isinstance(state_dict, SyntheticState):
                return torch.nn.modules.module._IncompatibleKeys([], [])
            return module_load(module, state_dict, *args, **kwargs)

        def load_into_optimizer(optimizer, state_dict):
            if isinstance(state_dict, SyntheticState):
                return None
            return optimizer_load(optimizer, state_dict)

        torch.hub.load_state_dict_from_url = download
        torch.utils.model_zoo.load_url = download
        torch.load = load
        torch.nn.Module.load_state_dict = load_into_module
        torch.optim.Optimizer.load_state_dict = load_into_optimizer


def _missing_checkpoint(f) -> bool:
    import os

    if not isinstance(f, str | os.PathLike) or os.path.exists(f):
        return False
    name = os.path.basename(os.fspath(f)).lower()
    return name.endswith(CHECKPOINT_SUFFIXES) or any(w in name for w in CHECKPOINT_WORDS)


# ------------------------------------------------------------------ the command line
def install_made_up_arguments() -> None:
    """A script run without its command line gets the defaults its parser declares, plus a
    made-up value for each required argument: the first of its `choices`, `1` for a number,
    else a path inside the run's temporary folder (so that what it writes there stays in the
    run's sandbox). Applied to `parse_args()` / `parse_known_args()` on `sys.argv`."""
    import argparse
    import sys
    import tempfile

    original = argparse.ArgumentParser.parse_known_args

    def parse_known_args(parser, args=None, namespace=None):
        if args is None:
            args = sys.argv[1:] + _made_up(parser, sys.argv[1:], tempfile.gettempdir())
        return original(parser, args, namespace)

    argparse.ArgumentParser.parse_known_args = parse_known_args


def _made_up(parser, given: list[str], folder: str) -> list[str]:
    values: list[str] = []
    for action in parser._actions:
        if not action.required or action.nargs == 0:
            continue
        if action.option_strings and any(o in given for o in action.option_strings):
            continue
        value = _value_for(action, folder)
        values += [action.option_strings[0], value] if action.option_strings else [value]
    return values


def _value_for(action, folder: str) -> str:
    import os

    if action.choices:
        return str(next(iter(action.choices)))
    if action.type in (int, float):
        return "1"
    return os.path.join(folder, action.dest)
