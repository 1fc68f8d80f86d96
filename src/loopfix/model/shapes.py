"""What kind of value a variable holds, as far as the fix needs to know.

Shapes are plain tuples so they compare and hash cheaply:

- ``TENSOR``, ``NONE``, ``OTHER`` (a non-tensor such as an int), ``UNKNOWN``; ``None`` is "no
  information yet" (the bottom of the lattice);
- ``("record", (field, ...), (s1, ...))`` a named tuple (`collections.namedtuple`), whose
  fields are read by name; ``("tuple", (s1, s2, ...))`` a tuple of known arity,
  ``("vtuple", s)`` a tuple of any length whose items have shape ``s``, ``("seq", s)`` a
  list (or other iterable) of them;
- ``("opt", s)`` either ``None`` or ``s`` (a state that starts as ``None``);
- ``("module", kind, cls)`` an ``nn.Module``: ``kind`` is the torch class name (``"LSTM"``) or
  ``"custom"``; ``cls`` names a class defined in the analysed file;
- ``("modules", m)`` a ``ModuleList`` / list of modules of shape ``m``;
- ``("params", paths)`` parameters of the modules at those paths (``model.parameters()``,
  lists and chains of them, param-group dicts); ``("optimizer", paths)`` an optimizer over
  them (``paths`` is None when its parameters could not be resolved); ``("scaler",)``;
- ``("dict", ((key, s), ...))`` a dict literal with string keys, entry by entry (a last entry
  ``("**", UNKNOWN)`` stands for the keys of `**` spreads);
- ``("object", cls)`` an instance of a (non-module) class defined in the analysed file or a
  project module it imports.
"""

from __future__ import annotations

from typing import Any

Shape = Any

TENSOR = "tensor"
NONE = "none"
OTHER = "other"
UNKNOWN = "unknown"

LSTM_STATE = ("tuple", (TENSOR, TENSOR))

# Output shape of a forward call, by torch.nn class name.
RECURRENT_OUTPUT = {
    "LSTM": ("tuple", (TENSOR, LSTM_STATE)),
    "GRU": ("tuple", (TENSOR, TENSOR)),
    "RNN": ("tuple", (TENSOR, TENSOR)),
    "LSTMCell": LSTM_STATE,
    "GRUCell": TENSOR,
    "RNNCell": TENSOR,
}


# a NumPy array: an item stored into it (`buf[t] = v`) is converted to a number, so the
# array holds no graph (`numpy.ndarray.__setitem__`)
NUMPY_ARRAY: Shape = ("ndarray",)


def module(kind: str, cls: str | None = None) -> Shape:
    return ("module", kind, cls)


def is_module(shape: Shape) -> bool:
    return isinstance(shape, tuple) and shape[0] == "module"


def is_optimizer(shape: Shape) -> bool:
    return isinstance(shape, tuple) and shape[0] == "optimizer"


# marks a path in an optimizer's paths that names one tensor (`self.log_alpha`), not a module
TENSOR_PATH = "="


def param_paths(shape: Shape) -> frozenset[str] | None:
    """The module paths whose parameters a value holds, if it holds only parameters."""
    if not isinstance(shape, tuple):
        return None
    if shape[0] == "params":
        return shape[1]
    if shape[0] in ("seq", "vtuple"):
        return param_paths(shape[1])
    if shape[0] == "tuple" and shape[1]:
        parts = [param_paths(item) for item in shape[1]]
        return None if None in parts else frozenset().union(*parts)
    return None


def item_shape(shape: Shape) -> Shape:
    """Shape of one item when the value is iterated or indexed."""
    if isinstance(shape, tuple):
        if shape[0] == "params":
            return shape
        if shape[0] in ("seq", "vtuple"):
            return shape[1]
        if shape[0] == "modules":
            return shape[1]
        if shape[0] == "tuple":
            return join_all(shape[1])
    if shape == TENSOR:
        return TENSOR
    return UNKNOWN if shape is not None else None


def join(a: Shape, b: Shape) -> Shape:
    if a is None:
        return b
    if b is None or a == b:
        return a
    if a == NONE:
        return b if _is_opt(b) else ("opt", b)
    if b == NONE:
        return a if _is_opt(a) else ("opt", a)
    if _is_opt(a) or _is_opt(b):
        return ("opt", join(present(a), present(b)))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return _join_containers(a, b)
    return UNKNOWN


def join_all(shapes) -> Shape:
    result = None
    for shape in shapes:
        result = join(result, shape)
    return result


def _is_opt(shape: Shape) -> bool:
    return isinstance(shape, tuple) and shape[0] == "opt"


def present(shape: Shape) -> Shape:
    """The shape of a value known not to be None: an optional one's inner shape."""
    return shape[1] if _is_opt(shape) else shape


def _join_containers(a: tuple, b: tuple) -> Shape:
    if a[0] == b[0] == "record" and a[1] == b[1]:
        return ("record", a[1], tuple(join(x, y) for x, y in zip(a[2], b[2], strict=True)))
    if a[0] == b[0] == "tuple" and len(a[1]) == len(b[1]):
        return ("tuple", tuple(join(x, y) for x, y in zip(a[1], b[1], strict=True)))
    tuples = {"tuple", "vtuple"}
    if a[0] in tuples and b[0] in tuples:
        return ("vtuple", join(item_shape(a), item_shape(b)))
    if a[0] == b[0] == "seq":
        return ("seq", join(a[1], b[1]))
    if {a[0], b[0]} in ({"seq", "tuple"}, {"seq", "vtuple"}):
        # a list literal on one path, a list appended to on the other (AttnGAN's `netsD`)
        return ("seq", join(item_shape(a), item_shape(b)))
    if a[0] == b[0] == "modules":
        return ("modules", join(a[1], b[1]))
    if a[0] == b[0] == "module":
        return a if a[1] == b[1] else module("custom")
    if a[0] == b[0] and a[0] in ("params", "optimizer"):
        return (a[0], None if a[1] is None or b[1] is None else a[1] | b[1])
    return UNKNOWN


def within(path: str, root: str) -> bool:
    """Whether module path `path` is `root` or inside it (`net.enc`, `heads[*]` in `heads`)."""
    return path == root or path.startswith((root + ".", root + "["))


def covers(zeroed: frozenset[str] | None, modules: frozenset[str]) -> bool:
    """Every path of `modules` is one of `zeroed` or inside one (False for unknown `zeroed`):
    a `zero_grad()` over `zeroed` clears what a step over `modules` uses."""
    if zeroed is None:
        return False
    return all(any(within(m, z) for z in zeroed) for m in modules)


def element_path(container: str) -> str:
    """The path of any one element of a container of modules (`heads` -> `heads[*]`)."""
    return f"{container}[*]"


def instance(cls: str) -> Shape:
    """An instance of a (non-module) class defined in the analysed file."""
    return ("object", cls)


def class_name(shape: Shape) -> str | None:
    """The file's class a module or object shape is an instance of."""
    if isinstance(shape, tuple):
        if shape[0] == "module":
            return shape[2]
        if shape[0] == "object":
            return shape[1]
    return None


def map_paths(shape: Shape, rename) -> Shape:
    """`shape` with every module path `p` it names replaced by `rename(p)` (None: unknown)."""
    if not isinstance(shape, tuple) or not shape:
        return shape
    kind = shape[0]
    if kind in ("params", "optimizer"):
        if shape[1] is None:
            return shape
        renamed = [rename(p) for p in shape[1]]
        if None in renamed:
            return (kind, None) if kind == "optimizer" else UNKNOWN
        return (kind, frozenset(renamed))
    if kind == "scheduler":
        return (kind, None if shape[1] is None else rename(shape[1]))
    if kind == "tuple":
        return (kind, tuple(map_paths(item, rename) for item in shape[1]))
    if kind == "record":
        return (kind, shape[1], tuple(map_paths(item, rename) for item in shape[2]))
    if kind in ("vtuple", "seq", "opt", "modules"):
        return (kind, map_paths(shape[1], rename))
    if kind == "dict":
        return (kind, tuple((key, map_paths(item, rename)) for key, item in shape[1]))
    return shape


def rename_paths(shape: Shape, renames: dict[str, str]) -> Shape:
    """Module paths in a caller's terms -> in a callee's (`{"G": "netG"}`: `G.l` -> `netG.l`).
    Paths no entry covers are kept as they are."""

    def rename(path: str) -> str:
        marker = TENSOR_PATH if path.startswith(TENSOR_PATH) else ""
        path = path.removeprefix(marker)
        for old, new in renames.items():
            if within(path, old):
                return marker + new + path[len(old) :]
        return marker + path

    return map_paths(shape, rename) if renames else shape


def keep_paths(shape: Shape, visible: set[str]) -> Shape:
    """Paths whose root name is not `visible` in a scope become unknown there."""
    return map_paths(
        shape, lambda p: p if p.removeprefix(TENSOR_PATH).split(".")[0] in visible else None
    )
