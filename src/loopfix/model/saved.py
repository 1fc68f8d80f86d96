"""Tensors autograd saved for a backward, and in-place changes to them (the facts LF008 asks).

An operation that needs a value to compute its gradient keeps that tensor (its input, or its
result) with the tensor's version; an in-place change bumps the version, and the backward
then fails with "one of the variables needed for gradient computation has been modified by an
inplace operation". Which operation keeps which tensor is a fact of torch's autograd: the
formulas in PyTorch's `tools/autograd/derivatives.yaml` (e.g. `sigmoid: self:
sigmoid_backward(grad, result)` keeps the result; `log: self: grad.div(self.conj())` keeps the
input), and for the layers, the backward functions of `torch.nn.functional`'s kernels. The
table below holds the common ones; `tests/test_saved_tensors.py` runs every entry on torch and
checks that it keeps what the table says, and only that.

The analysis follows one function body (a `forward`, a training step, a module body) in order,
binding each name to the tensor it holds: views and `.detach()` share their base's version
counter, so a change through them counts. A change is reported only when everything is
proven: the operation ran with a tensor that requires grad (the output of a trainable layer,
or computed from one), the changed tensor is the one it saved, and the operation's output is
read after the change, so that a backward will go through it. Code under `torch.no_grad()`
saves nothing and makes nothing that requires grad, but its in-place changes of tensors saved
before it count (the version counter moves all the same). Code behind a test of `training` or
grad mode, and loops' state across iterations, are left out.
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass, field
from itertools import count

from loopfix.model.index import TreeIndex, child_nodes, keep, kept_fact, syntax_key, walk
from loopfix.model.symbols import ClassInfo, Symbols, dotted_name

# -- the table (source: PyTorch tools/autograd/derivatives.yaml; checked by running it) -----

# Operations that keep their result: `out = torch.sigmoid(z); out += r` breaks the backward.
RESULT_SAVED = frozenset(
    {"sigmoid", "tanh", "exp", "relu", "sqrt", "rsqrt", "softmax", "log_softmax"}
)
# Operations that keep their input when it requires grad: `y = F.gelu(x); x += r` breaks it.
INPUT_SAVED = frozenset(
    {"elu", "leaky_relu", "gelu", "silu", "relu6", "hardtanh", "softplus", "log", "sin", "cos",
     "abs", "pow", "max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
     "avg_pool3d", "instance_norm"}
)  # fmt: skip
# Layers with weights that keep their input whenever the layer or its input requires grad
# (a frozen convolution or norm still keeps it), and `linear`, which keeps its input only for
# its weight's gradient (a frozen Linear does not).
LAYER_INPUT_SAVED = frozenset({"conv", "batch_norm", "layer_norm", "group_norm"})
WEIGHT_INPUT_SAVED = frozenset({"linear"})
# In-place activations keep their (changed) result: `leaky_relu_: leaky_relu_backward(grad,
# result, ...)`; applying another in-place change after them breaks the backward too.
INPLACE_RESULT_SAVED = frozenset({"relu", "leaky_relu", "elu"})

# torch.nn classes -> the operation above they apply
MODULE_OPERATIONS = {
    "Sigmoid": "sigmoid", "Tanh": "tanh", "ReLU": "relu", "Softmax": "softmax",
    "LogSoftmax": "log_softmax", "ELU": "elu", "LeakyReLU": "leaky_relu", "GELU": "gelu",
    "SiLU": "silu", "ReLU6": "relu6", "Hardtanh": "hardtanh", "Softplus": "softplus",
    "MaxPool1d": "max_pool1d", "MaxPool2d": "max_pool2d", "MaxPool3d": "max_pool3d",
    "AvgPool1d": "avg_pool1d", "AvgPool2d": "avg_pool2d", "AvgPool3d": "avg_pool3d",
    "InstanceNorm1d": "instance_norm", "InstanceNorm2d": "instance_norm",
    "InstanceNorm3d": "instance_norm", "Conv1d": "conv", "Conv2d": "conv", "Conv3d": "conv",
    "ConvTranspose1d": "conv", "ConvTranspose2d": "conv", "ConvTranspose3d": "conv",
    "BatchNorm1d": "batch_norm", "BatchNorm2d": "batch_norm", "BatchNorm3d": "batch_norm",
    "SyncBatchNorm": "batch_norm", "LayerNorm": "layer_norm", "GroupNorm": "group_norm",
    "Linear": "linear",
}  # fmt: skip
# functional names that differ from the operation's
FUNCTION_OPERATIONS = {"conv1d": "conv", "conv2d": "conv", "conv3d": "conv", "pow": "pow"}
# modules that may return a view of their input (`nn.Flatten`): a walk through an
# `nn.Sequential` stops there
VIEWING_MODULES = frozenset({"Flatten", "Unflatten"})
# methods that change the layers of an `nn.Sequential` after it is built
SEQUENTIAL_CHANGES = frozenset(
    {"append", "extend", "insert", "add_module", "register_module", "pop", "__setitem__"}
)
# classes whose instances have weights of their own (their output requires grad)
WEIGHTED_MODULES = frozenset(
    {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
     "ConvTranspose3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm",
     "LayerNorm", "GroupNorm", "Embedding", "LSTM", "GRU", "RNN", "LSTMCell", "GRUCell",
     "RNNCell", "PReLU", "MultiheadAttention", "TransformerEncoderLayer",
     "TransformerDecoderLayer", "TransformerEncoder", "TransformerDecoder", "Transformer"}
)  # fmt: skip
# classes that change their input in place when built with `inplace=True`
INPLACE_MODULES = frozenset(
    {"ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "SiLU", "Hardtanh", "Hardswish",
     "Hardsigmoid", "Mish", "Threshold", "RReLU", "Dropout", "Dropout1d", "Dropout2d",
     "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"}
)  # fmt: skip
# tensor methods that change the tensor's values in place, with their out-of-place form
IN_PLACE_METHODS = {
    "add_": "add", "sub_": "sub", "mul_": "mul", "div_": "div", "clamp_": "clamp",
    "clamp_min_": "clamp_min", "clamp_max_": "clamp_max", "clip_": "clip", "relu_": "relu",
    "sigmoid_": "sigmoid", "tanh_": "tanh", "exp_": "exp", "log_": "log", "sqrt_": "sqrt",
    "pow_": "pow", "abs_": "abs", "neg_": "neg", "masked_fill_": "masked_fill",
    "masked_scatter_": "masked_scatter", "index_fill_": "index_fill", "index_add_": "index_add",
    "index_copy_": "index_copy", "index_put_": "index_put", "scatter_": "scatter",
    "scatter_add_": "scatter_add", "addcmul_": "addcmul", "addcdiv_": "addcdiv", "lerp_": "lerp",
    "floor_": "floor", "ceil_": "ceil", "round_": "round", "sign_": "sign", "fmod_": "fmod",
    "remainder_": "remainder", "fill_": None, "zero_": None, "copy_": None,
    "uniform_": None, "normal_": None, "bernoulli_": None,
    # in-place views change only the shape and strides, but they bump the version counter
    # all the same: `a = torch.relu(h); a.unsqueeze_(1)` fails the backward of `relu`
    "unsqueeze_": "unsqueeze", "squeeze_": "squeeze", "transpose_": "transpose", "t_": "t",
    "swapdims_": "swapdims", "swapaxes_": "swapaxes", "as_strided_": "as_strided",
}  # fmt: skip
# torch.nn.functional functions with an `inplace` argument (its position when passed bare)
INPLACE_KEYWORD = {
    "relu": 1, "relu6": 1, "leaky_relu": 2, "elu": 2, "selu": 1, "celu": 2, "silu": 1,
    "hardtanh": 3, "hardswish": 1, "mish": 1, "threshold": 3, "rrelu": 4, "dropout": 3,
    "dropout1d": 3, "dropout2d": 3, "dropout3d": 3, "alpha_dropout": 3,
}  # fmt: skip
# views share their base's storage and version counter; so does `.detach()` (its docs:
# "in-place modifications on either of them will be seen, and may trigger errors in
# correctness checks")
VIEW_METHODS = frozenset(
    {"view", "view_as", "unsqueeze", "squeeze", "transpose", "permute", "t", "narrow",
     "expand", "expand_as", "select", "diagonal", "unfold", "detach", "as_strided"}
)  # fmt: skip
# calls and attributes whose result carries no graph
GRAPHLESS_METHODS = frozenset(
    {"detach", "item", "tolist", "numpy", "size", "dim", "numel", "argmax", "argmin", "eq",
     "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "long", "int", "bool",
     "nonzero", "zeros_like", "ones_like", "empty_like", "rand_like", "randn_like",
     "full_like", "randint_like", "new_zeros", "new_ones", "new_empty", "new_full",
     "new_tensor", "sign", "round", "floor", "ceil", "stride", "data_ptr", "is_contiguous",
     "get_device", "all", "any", "equal", "allclose", "count_nonzero", "bincount"}
)  # fmt: skip
GRAPHLESS_ATTRIBUTES = frozenset(
    {"data", "shape", "dtype", "device", "grad", "requires_grad", "is_leaf", "ndim", "T"}
)
# calls that only report a value (their argument is not read into a graph)
REPORTING_CALLS = frozenset(
    {"print", "len", "isinstance", "str", "repr", "float", "int", "bool", "format", "type",
     "id", "hasattr", "getattr"}
)  # fmt: skip
GRAD_MODE_WORDS = frozenset(
    {"training", "requires_grad", "is_grad_enabled", "is_inference_mode_enabled"}
)
NO_GRAD_CONTEXTS = frozenset({"no_grad", "inference_mode"})


# -- what the analysis finds --------------------------------------------------------------


@dataclass
class Save:
    """One operation that kept a tensor for its backward."""

    id: int
    call: ast.expr  # the call (or binary operation) that saved it
    statement: ast.stmt
    operation: str  # e.g. "`torch.sigmoid` keeps its result"


@dataclass(eq=False)
class Counter:
    """A tensor's storage and version counter, shared by its views and detached copies."""

    saves: list[Save] = field(default_factory=list)
    # where else the tensor went that loopfix does not follow (`self.cache`, a list, a
    # function's argument): an out-of-place fix would hide the change from there
    escaped: str = ""


@dataclass(frozen=True)
class Binding:
    counter: Counter
    grad: bool = False  # provably requires grad
    graph: frozenset[int] = frozenset()  # saves whose output this value's graph goes through


@dataclass
class InPlaceChange:
    """An in-place change of a tensor that autograd saved, whose saving operation's output
    is read afterwards (so a backward goes through it and fails)."""

    statement: ast.stmt
    node: ast.AST  # the changing expression (the augmented assignment, the call, ...)
    var: str  # the changed tensor's name
    save: Save
    how: str  # "augmented" | "subscript" | "method" | "keyword" | "module" | "callee"
    # where to write `inplace=False` (a keyword or positional argument), or None
    switch: ast.expr | None = None
    # the changing statement also saves the tensor (`hs[t + 1] = torch.tanh(self.U(hs[t]))`)
    saved_here: bool = False
    alias: str = ""  # another name of the same tensor read after the change
    kept_in: str = ""  # where else the tensor was put that loopfix does not follow
    # the changed tensor when no name holds it (`self.block1(x)` in
    # `self.block2(self.block1(x))`); `var` is then its source text
    unnamed: ast.expr | None = None
    # made under `torch.no_grad()`: out of place there, the result would carry no graph
    without_grad: bool = False


@dataclass
class _Candidate:
    change: InPlaceChange
    at_risk: frozenset[int]
    confirmed: bool = False


# -- the analysis ---------------------------------------------------------------------------


def saved_tensor_changes(
    tree: ast.Module,
    symbols: Symbols,
    index: TreeIndex,
    kept: dict | None = None,
    pieces: dict | None = None,
) -> list[InPlaceChange]:
    """Every proven in-place change of a saved tensor in the module: in each method of its
    `torch.nn.Module` classes (where the parameters make values require grad) and in each
    other function and the module body, when they call `backward()`. `index` is the
    module's (`index.py`). `kept` (a `ChunkParser`'s, kept across the
    analyses of one document) gives back each function's changes from an earlier analysis
    while every statement its run can read is the same (`_Reuse`); `pieces`, the parser's
    index of each statement, says what each mentions."""
    functions, words = index.functions, index.words
    reuse = _Reuse(kept, tree, symbols, index, pieces or {}) if kept is not None else None
    found: list[InPlaceChange] = []
    built: dict[int, dict] = {}
    trained: dict[int, set[str]] = {}
    training = [t for t in [tree, *(f for _, f in functions)] if "backward" in words.get(id(t), ())]
    imports = frozenset(symbols.imports.items())  # what `torch.no_grad` is spelled as
    called: set[str] = set()
    for scope in training:  # the module's own (a new tree each time) is not kept
        called |= kept_fact(
            kept if scope is not tree else None,
            "called",
            scope,
            lambda s=scope: _called_from_training([s], symbols),
            imports,
        )

    def run(kind: str, function, make) -> list[InPlaceChange]:
        changes = reuse.get(kind, function) if reuse is not None else None
        if changes is None:
            changes = make().run(function)
            if reuse is not None:
                reuse.put(kind, function, changes)
        return changes

    for owner, function in functions:
        if _no_grad(function, symbols):
            continue
        info = symbols.classes.get(owner.name) if owner is not None else None
        if info is None or info.node is not owner or not info.is_module:
            if "backward" in words.get(id(function), ()):  # training code
                found += run("training", function, lambda: _Scope(symbols, None, {}))
            elif owner is None and function.name in called:  # a helper the training calls:
                found += run("helper", function, lambda: _helper_scope(symbols))
            continue
        if owner.name in symbols.frozen_classes or function.name == "__init__":
            continue
        if id(owner) not in trained:
            methods = kept_fact(kept, "trained", owner, lambda o=owner: _trained_methods(o))
            trained[id(owner)] = methods | (called - {"__init__"})
        if function.name not in trained[id(owner)] and "backward" not in words.get(
            id(function), ()
        ):
            continue  # `generate()`, `predict()`: inference a backward never goes through

        def method_scope(info=info, owner=owner) -> _Scope:
            if id(owner) not in built:
                built[id(owner)] = _attribute_constructors(info, symbols)
            return _Scope(symbols, info, built[id(owner)])

        found += run("method", function, method_scope)
    if "backward" in words.get(id(tree), ()):
        found += _Scope(symbols, None, {}).run(tree)
    return sorted(found, key=lambda c: (c.statement.lineno, c.statement.col_offset))


def _helper_scope(symbols: Symbols) -> _Scope:
    """A module function the training code calls: what it returns is backpropagated."""
    scope = _Scope(symbols, None, {})
    scope.returns_to_backward = True
    return scope


FREEZING_WORDS = frozenset({"requires_grad", "requires_grad_"})


@dataclass(frozen=True)
class _Remembered:
    function: ast.AST
    statements: tuple[ast.stmt, ...]  # what the run could read, compared by identity
    linked: tuple[Symbols, ...]  # the project modules' symbols, compared by identity
    facts: tuple  # the module-wide facts it used, compared by value
    changes: list[InPlaceChange]


class _Reuse:
    """Which earlier results of one document's analyses still hold (an editor's keystroke, a
    patched text a fix is proven on: the parser gives back the top-level statements the edit
    did not touch, as the same objects).

    A function's run reads, besides its own statement: the top-level statements that bind a
    name it mentions, and transitively theirs (helpers it calls, the classes of its layers,
    imports, globals); any statement that freezes parameters (`requires_grad`); facts taken
    from the whole module (names used like modules, frozen modules and classes); and the
    project modules it links to. Its result is reused only while all of those are the same:
    a keystroke in one training function leaves the results of the model classes it does not
    define in place."""

    def __init__(
        self, kept: dict, tree: ast.Module, symbols: Symbols, index: TreeIndex, pieces: dict
    ):
        self.kept, self.tree, self.parents, self.pieces = kept, tree, index.parents, pieces
        self.statements = tree.body
        self.words, self.bound = [], []
        for statement in tree.body:
            words, bound = self._names_of(statement)
            self.words.append(words)
            self.bound.append(bound)
        self.freezing = {i for i, w in enumerate(self.words) if w & FREEZING_WORDS}
        self.binders: dict[str, list[int]] = {}  # name -> the statements that bind it
        for i, bound in enumerate(self.bound):
            for name in bound:
                self.binders.setdefault(name, []).append(i)
        linked = {id(s): s for s in [*symbols.linked_homes(), *symbols.modules.values()]}
        self.linked = tuple(linked.values())
        self.facts = (
            frozenset(symbols.module_evidence),
            frozenset(symbols.frozen),
            frozenset(symbols.frozen_classes),
        )
        self.position = {id(s): i for i, s in enumerate(tree.body)}
        self._read: dict[int, tuple[ast.stmt, ...]] = {}
        self._edges: dict[int, set[int]] = {}

    def get(self, kind: str, function) -> list[InPlaceChange] | None:
        found = self.kept.get(_key(kind, function))
        if found is None or found.function is not function:
            return None
        statements = self._read_by(function)
        if (
            len(found.statements) != len(statements)
            or any(a is not b for a, b in zip(found.statements, statements, strict=True))
            or len(found.linked) != len(self.linked)
            or any(a is not b for a, b in zip(found.linked, self.linked, strict=True))
            or found.facts != self.facts
        ):
            return None
        return found.changes

    def put(self, kind: str, function, changes: list[InPlaceChange]) -> None:
        remembered = _Remembered(
            function, self._read_by(function), self.linked, self.facts, changes
        )
        keep(self.kept, _key(kind, function), remembered)

    def _read_by(self, function) -> tuple[ast.stmt, ...]:
        """The top-level statements the run of `function` can read, in source order."""
        top = self._top(function)
        if top is None:
            return tuple(self.statements)  # not found: everything
        if id(top) not in self._read:
            reached: set[int] = set()
            pending = [self.position[id(top)]]
            while pending:
                i = pending.pop()
                if i not in reached:
                    reached.add(i)
                    pending += [j for j in self._binding(i) if j not in reached]
            chosen = sorted(reached | self.freezing)
            self._read[id(top)] = tuple(self.statements[i] for i in chosen)
        return self._read[id(top)]

    def _binding(self, i: int) -> set[int]:
        """The statements that bind a name statement `i` mentions."""
        found = self._edges.get(i)
        if found is None:
            binders = self.binders
            named = self.words[i] & binders.keys()  # a set operation: words are many
            found = self._edges[i] = {j for w in named for j in binders[w]}
        return found

    def _names_of(self, statement: ast.stmt) -> tuple[frozenset[str], frozenset[str]]:
        """What a top-level statement mentions and binds, walked once per statement."""
        key = ("statement", statement.lineno)
        found = self.kept.get(key)
        if found is None or found[0] is not statement:
            piece = self.pieces.get(id(statement))
            piece = piece[1] if piece is not None and piece[0] is statement else None
            if piece is not None:  # the index has its words
                words = frozenset().union(*piece.words.values())
            else:
                words = _statement_words(statement)
            found = keep(self.kept, key, (statement, words, _bound_names(statement, piece)))
        return found[1], found[2]

    def _top(self, node: ast.AST) -> ast.stmt | None:
        """The top-level statement that holds `node`."""
        while True:
            parent = self.parents.get(id(node))
            if parent is None:
                return None
            if parent[0] is self.tree:
                return node
            node = parent[0]


def _key(kind: str, function) -> tuple:
    """Where a function's result is kept: by its place, so that the next version of a
    function replaces the one before (an entry holds only for the very same objects)."""
    return (kind, function.name, function.lineno, function.col_offset)


def _statement_words(statement: ast.stmt) -> frozenset[str]:
    """Every word (name, attribute, keyword) a top-level statement mentions."""
    words: set[str] = set()
    for node in walk(statement):
        kind = type(node)
        if kind is ast.Name:
            words.add(node.id)
        elif kind is ast.Attribute:
            words.add(node.attr)
        elif kind is ast.keyword and node.arg:
            words.add(node.arg)
    return frozenset(words)


def _bound_names(statement: ast.stmt, piece=None) -> frozenset[str]:
    """The module-level names a top-level statement can bind. A function or a class: its own
    name (a run reaches another class's methods through that name: a layer's constructor, a
    base class; never through a method's name alone), and the names of any import inside it
    (the module's imports are gathered at any depth). Any other statement: every name it
    stores, imports or defines, at any depth (a `def` inside `if` or `try` is the module's
    function). `piece`: the statement's index (`index_tree`), which lists its imports."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        imports = [e[-1] for e in piece.imports] if piece is not None else walk(statement)
        aliases = (a for node in imports if isinstance(node, ast.Import | ast.ImportFrom)
                   for a in node.names)  # fmt: skip
        return frozenset({statement.name, *(_alias_name(a) for a in aliases)})
    names = set()
    for node in walk(statement):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add(_alias_name(node))
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return frozenset(names)


def _alias_name(alias: ast.alias) -> str:
    return (alias.asname or alias.name).split(".")[0]


def _called_from_training(scopes: list[ast.AST], symbols: Symbols) -> set[str]:
    """Names the training code calls (`model.compute_loss(x)`, `loss_fn(out, y)`): the
    methods and functions whose values its backward goes through. Not in the functions and
    classes it defines, nor under `torch.no_grad()` (`model.generate(x)` to evaluate)."""
    names = set()
    pending = [child for scope in scopes for child in child_nodes(scope)]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.With) and any(
            _is_no_grad(item.context_expr, symbols) for item in node.items
        ):
            continue
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name and name not in ("backward", "step", "zero_grad"):
                names.add(name)
        pending.extend(child_nodes(node))
    return names


def _trained_methods(cls: ast.ClassDef) -> set[str]:
    """`forward` and the methods it calls through `self`, transitively: what a training
    step's backward goes through. Other methods (`generate`, `predict`, `sample`) are
    inference or bookkeeping, which a backward reaches only in ways loopfix does not see."""
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    reached, pending = set(), ["forward"]
    while pending:
        name = pending.pop()
        if name in reached or name not in methods:
            continue
        reached.add(name)
        for node in walk(methods[name]):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and _self_attribute(func):
                pending.append(func.attr)
    return reached | {"forward"}


def mutates_first_argument(
    function: ast.FunctionDef,
    symbols: Symbols,
    owner: ClassInfo | None = None,
    given: frozenset[str] = frozenset(),
) -> bool:
    """Whether `function` (a `forward(self, x)` or `f(x)`) changes its first tensor argument
    in place before binding the name to anything else: by an in-place operation, an in-place
    module of `owner` (its class: `x = self.act(x)` with `nn.ReLU(inplace=True)`), or a call
    that does. `given`: the parameters the call passes something other than `None`, which
    decide the body's `if mask is not None:` tests of parameters that default to `None`
    (`_taken_statements`). Answered once per function, class and such tests decided (a base's
    method means the subclass's layers). A call back into a function still being answered
    counts as no change: the answer of the outermost one is then the least fixpoint, but the
    answers of those in between rest on that guess and are not kept (asked later, they are
    worked out again, so no answer depends on which was asked first)."""
    given = given & symbols.remember(("none tests", id(function)), _none_tests, function)
    key = (
        "mutates its first argument",
        id(function),
        id(owner.node) if owner else None,
        given,
    )
    if key in symbols.facts:
        return bool(symbols.facts[key])
    asking, guessed = _questions()
    if key in asking:
        guessed.update(asking[asking.index(key) + 1 :])
        return False
    asking.append(key)
    try:
        answer = _mutates_first(function, symbols, owner, given)
    finally:
        asking.pop()
    if key in guessed:
        guessed.discard(key)
    else:
        symbols.facts[key] = answer
    return answer


_ANSWERING = threading.local()  # an editor may analyse in more than one thread


def _questions() -> tuple[list[tuple], set[tuple]]:
    """The questions `mutates_first_argument` is answering in this thread, outermost first,
    and those of them whose answer rests on the guess for one further out."""
    if not hasattr(_ANSWERING, "asking"):
        _ANSWERING.asking, _ANSWERING.guessed = [], set()
    return _ANSWERING.asking, _ANSWERING.guessed


def _mutates_first(
    function: ast.FunctionDef, symbols: Symbols, owner: ClassInfo | None, given: frozenset[str]
) -> bool:
    params = [a.arg for a in function.args.args]
    if params and params[0] == "self":
        params = params[1:]
    if not params:
        return False
    name = params[0]
    built = _attribute_constructors(owner, symbols) if owner is not None else {}
    scope = _Scope(symbols, owner, built)
    scope.function = function
    for statement in _taken_statements(function.body, given):
        if any(_changed_name(n, symbols, scope) == name for n in _in_place_nodes(statement)):
            return True
        if name in _assigned_names([statement]):
            return False
    return False


def _taken_statements(body: list[ast.stmt], given: frozenset[str]) -> list[ast.stmt]:
    """The statements of `body` in order, with the body of each `if p is not None:` whose
    parameter `p` the call gives (`given`) in its place: Python runs it at that call. The
    parameter is bound again nowhere before (`_none_tests` asks that)."""
    taken = []
    for statement in body:
        tested = _none_tested(statement)
        if tested is not None and tested in given:
            taken += _taken_statements(statement.body, given)
        else:
            taken.append(statement)
    return taken


def _none_tested(statement: ast.stmt) -> str | None:
    """`p` of `if p is not None:` with no `else`, or None."""
    if not isinstance(statement, ast.If) or statement.orelse:
        return None
    test = statement.test
    if (
        isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and len(test.ops) == 1
        and isinstance(test.ops[0], ast.IsNot)
        and isinstance(test.comparators[0], ast.Constant)
        and test.comparators[0].value is None
    ):
        return test.left.id
    return None


def _none_tests(function: ast.FunctionDef) -> frozenset[str]:
    """The parameters defaulting to `None` that a top-level `if p is not None:` of the body
    tests, where nothing in the body binds them again."""
    tested = {_none_tested(s) for s in function.body} - {None}
    if not tested:
        return frozenset()
    return frozenset(tested & _none_defaults(function.args) - _assigned_names(function.body))


def _none_defaults(arguments: ast.arguments) -> set[str]:
    """The parameters whose default is `None`."""
    positional = arguments.posonlyargs + arguments.args
    pairs = [
        *zip(positional[::-1], arguments.defaults[::-1], strict=False),  # the last ones
        *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
    ]
    return {a.arg for a, default in pairs if _none(default)}


def _given(
    call: ast.Call, function: ast.FunctionDef, maybe_none: frozenset[str] | None
) -> frozenset[str]:
    """The parameters `call` passes something that is surely not `None`: an expression that
    computes a value (`torch.rand(4, 5) > 0.7`, `lengths.unsqueeze(1)`), or a name of the
    caller's that it never binds to `None` (not in `maybe_none`: a parameter defaulting to
    `None`, `mask=None` in `forward`, nor `mask = None`; every name, when that is not known).
    A literal, an attribute (`self.mask`, often `None` until set) or a name that may be
    `None` is not; nothing is for a call that unpacks `*args` or `**kwargs` (which
    parameter those fill is not read)."""
    if any(isinstance(a, ast.Starred) for a in call.args):
        return frozenset()
    if any(k.arg is None for k in call.keywords):
        return frozenset()
    names = [a.arg for a in function.args.posonlyargs + function.args.args]
    if names and names[0] == "self":
        names = names[1:]
    passed = dict(zip(names, call.args, strict=False))  # more parameters than arguments
    passed |= {k.arg: k.value for k in call.keywords}
    return frozenset(
        name
        for name, value in passed.items()
        if not isinstance(value, ast.Constant | ast.Attribute)
        and not (isinstance(value, ast.Name) and (maybe_none is None or value.id in maybe_none))
    )


def _maybe_none_names(function: ast.AST) -> frozenset[str]:
    """The names of `function` that may hold `None`: its parameters that default to `None`
    and the names it binds to a literal `None` anywhere."""
    arguments = getattr(function, "args", None)
    names = _none_defaults(arguments) if isinstance(arguments, ast.arguments) else set()
    for node in walk(function):
        if isinstance(node, ast.Assign) and _none(node.value):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and node.value is not None and _none(node.value):
            names |= {node.target.id} if isinstance(node.target, ast.Name) else set()
    return frozenset(names)


def _none(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


class _Scope:
    """One function body run in order; see the module's docstring."""

    def __init__(self, symbols: Symbols, owner: ClassInfo | None, built: dict) -> None:
        self.symbols, self.owner, self.ids = symbols, owner, count()
        self.returns_to_backward = owner is not None  # its values go to a backward elsewhere
        self.env: dict[str, Binding] = {}
        self.candidates: list[_Candidate] = []
        self.modules = built  # attribute -> the constructor call that builds it
        self._frozen: set[str] | None = None
        self.later_reads: dict[str, list[ast.Name]] = {}
        self.integers: set[str] = set()  # names bound to ints by a loop (index views)
        self.lists: set[str] = set()  # names bound to Python lists (`hs = [None] * (T + 1)`)
        self.values: dict[int, Binding] = {}  # the current statement's expressions
        self.pending: frozenset[int] = frozenset()  # what reads before a backward went through
        # names the function binds once to a constructor call (`act = nn.ReLU(True)`)
        self._local_modules: dict[str, ast.Call] | None = None
        self._layers: dict[tuple[str, str], tuple | None] = {}  # `_layer`'s answers
        # inside `with torch.no_grad():`: nothing is saved and no result requires grad, but
        # an in-place change still moves the version counter of a tensor saved before it
        self.no_grad = False

    def run(self, scope: ast.AST) -> list[InPlaceChange]:
        self.function = scope
        if not self._may_change_in_place(scope.body):
            return []  # nothing in it changes a tensor in place: no candidate to follow
        self._block(scope.body)
        return [c.change for c in self.candidates if c.confirmed]

    def _may_change_in_place(self, statements: list[ast.stmt]) -> bool:
        """Whether a statement the run would reach holds an in-place change (`_in_place`'s
        first test, which depends on no binding): a cheap pass that spares the run of a
        scope that has none."""
        for statement in statements:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            blocks = [getattr(statement, name, None) for name in _BLOCK_FIELDS]
            blocks = [b for b in blocks if b]
            if isinstance(statement, ast.Try):
                blocks += [h.body for h in statement.handlers]
            if isinstance(statement, ast.Match):
                continue  # forgotten by the run
            if blocks:
                if any(self._may_change_in_place(b) for b in blocks):
                    return True
                continue
            if any(
                _changed_target(n, self.symbols, self) is not None
                for n in _in_place_nodes(statement)
            ):
                return True
        return False

    # -- statements ---------------------------------------------------------------------
    def _block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self._statement(statement)

    def _statement(self, statement: ast.stmt) -> None:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return
        if isinstance(statement, ast.If | ast.While):
            if _mentions(statement.test, GRAD_MODE_WORDS):
                return self._forget(statement)
            self._confirm_reads(statement.test)
            loop = isinstance(statement, ast.While)
            return self._branches(statement, [statement.body, statement.orelse], loop)
        if isinstance(statement, ast.For | ast.AsyncFor):
            self._confirm_reads(statement.iter)
            loop_integers = _loop_integers(statement)
            if not loop_integers & _assigned_names(statement.body):
                self.integers |= loop_integers
            return self._branches(statement, [statement.body, statement.orelse], True)
        if isinstance(statement, ast.With | ast.AsyncWith):
            if any(_is_no_grad(item.context_expr, self.symbols) for item in statement.items):
                return self._without_grad(statement)
            return self._block(statement.body)
        if isinstance(statement, ast.Try):
            self._block(statement.body)
            return self._branches(
                statement, [h.body for h in statement.handlers] + [statement.finalbody], False
            )
        if isinstance(statement, ast.Match):
            return self._forget(statement)
        self._simple(statement)

    def _note_escapes(self, statement: ast.stmt) -> None:
        """Tensors the statement puts where names do not follow them: an attribute or an item
        (`self.cache = out`, `feats[0] = out`), a container or tuple (`[out]`,
        `a, b = out, y`), or an argument of a call that is not a torch operation or a layer
        (`history.append(out)`, `log(out)`)."""
        value = getattr(statement, "value", None)
        targets = getattr(statement, "targets", None) or [getattr(statement, "target", None)]
        if isinstance(statement, ast.Assign | ast.AnnAssign) and value is not None:
            stored = any(not isinstance(t, ast.Name) for t in targets if t is not None)
            if stored or isinstance(value, ast.Tuple | ast.List | ast.Dict | ast.Set):
                for name in _direct_names(value):
                    self._escape(name, ast.unparse(targets[0]))
        for node in walk(statement):
            if isinstance(getattr(node, "ctx", None), ast.Store):
                continue  # `a, b = ...` binds names, it stores nothing
            if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict) and node is not value:
                elements = node.values if isinstance(node, ast.Dict) else node.elts
                for element in elements:
                    if isinstance(element, ast.Name):
                        self._escape(element.id, "a container")
            if isinstance(node, ast.Call) and not self._follows(node):
                arguments = [*node.args, *(k.value for k in node.keywords)]
                helper = self._mutating_helper(node.func, node)
                if helper is not None:  # followed: the change it makes is the finding
                    first = _first_parameter(helper)
                    changed = (
                        node.args[0]
                        if node.args
                        else next((k.value for k in node.keywords if k.arg == first), None)
                    )
                    arguments = [a for a in arguments if a is not changed]
                for argument in arguments:
                    if isinstance(argument, ast.Name):
                        self._escape(argument.id, f"`{ast.unparse(node.func)}`")

    def _escape(self, name: str, where: str) -> None:
        binding = self.env.get(name)
        if binding is not None and not binding.counter.escaped:
            binding.counter.escaped = where

    def _follows(self, call: ast.Call) -> bool:
        """Calls whose arguments loopfix follows: torch operations, tensor methods, the
        class's layers, and calls that only report a value."""
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in REPORTING_CALLS or self._layer(func) is not None:
            return True
        if (self.symbols.qualify(func) or "").startswith("torch."):
            return True
        root = (dotted_name(func) or "").split(".")[0]
        return isinstance(func, ast.Attribute) and root in self.env and root != "self"

    def _branches(self, statement: ast.stmt, blocks: list, loop: bool) -> None:
        """Each block from what held before; afterwards, and at the top of a loop's body
        (the state of another iteration), the names a block binds hold something unknown."""
        assigned = _assigned_names([s for b in blocks for s in b])
        before = dict(self.env)
        ends = []
        for block in blocks:
            self.env = dict(before)
            if loop:
                self._drop(assigned)
            self._block(block)
            ends.append(self.env)
        self.env = before
        self._drop(assigned)
        for name, binding in list(self.env.items()):  # kept names carry what blocks wrote
            grown = [e[name] for e in ends if e.get(name) is not None]
            grown = [b for b in grown if b.counter is binding.counter]
            if grown:
                self.env[name] = Binding(
                    binding.counter,
                    binding.grad or any(b.grad for b in grown),
                    binding.graph | _union(grown),
                )

    def _without_grad(self, statement: ast.With | ast.AsyncWith) -> None:
        """A `with torch.no_grad():` block run on the bindings as they are: its in-place
        changes of tensors saved before it count (`probs.clamp_(min=1e-4)` after `softmax`
        fails the backward), what it computes requires no grad and saves nothing."""
        outer, self.no_grad = self.no_grad, True
        try:
            self._block(statement.body)
        finally:
            self.no_grad = outer

    def _forget(self, statement: ast.stmt) -> None:
        self._drop(_assigned_names([statement]))

    def _drop(self, names: set[str]) -> None:
        for name in names:
            self.env.pop(name, None)

    def _simple(self, statement: ast.stmt) -> None:
        self._confirm_reads(statement)
        self._note_escapes(statement)
        value = getattr(statement, "value", None)
        self.values = {}
        result = self._value(value, statement) if value is not None else None
        for node in _in_place_nodes(statement):
            self._in_place(statement, node, result)
        if isinstance(statement, ast.Return) and result is not None and self.returns_to_backward:
            self._confirm_graph(result.graph)  # `return self.block2(self.block1(x))`
        if isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                self._bind(target, result, value)
                self._write_into(target, result)
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            old = self._binding(statement.target.id)
            grad = old.grad or (result is not None and result.grad)
            graph = old.graph | (result.graph if result else frozenset())
            self.env[statement.target.id] = Binding(old.counter, grad, graph)

    def _bind(self, target: ast.expr, result: Binding | None, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.integers.discard(target.id)
            if value is not None and _is_list(value):
                self.lists.add(target.id)
            else:
                self.lists.discard(target.id)
            self.env[target.id] = result or Binding(Counter())
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:  # `out, h = self.lstm(x)`: new tensors, same graph
                fresh = Binding(Counter(), result.grad, result.graph) if result else None
                self._bind(
                    element.value if isinstance(element, ast.Starred) else element, fresh, None
                )

    def _write_into(self, target: ast.expr, result: Binding | None) -> None:
        """`hs[t + 1] = torch.tanh(...)`: the tensor (or list) written into now holds the
        value, its graph and whether it requires grad."""
        root = _root_name(target) if isinstance(target, ast.Subscript) else None
        old = self.env.get(root) if root is not None else None
        if old is None or result is None:
            return
        self.env[root] = Binding(old.counter, old.grad or result.grad, old.graph | result.graph)

    # -- values -------------------------------------------------------------------------
    def _binding(self, name: str) -> Binding:
        if name not in self.env:
            self.env[name] = Binding(Counter())
        return self.env[name]

    def _value(self, node: ast.expr, statement: ast.stmt) -> Binding | None:
        """The binding `node` evaluates to (None: not a tensor loopfix can follow), recording
        the saves it makes; its graph holds the saves of every operation it went through.
        Kept for the statement's in-place changes of tensors without a name."""
        result = self._evaluate(node, statement)
        if result is not None:
            self.values[id(node)] = result
        return result

    def _evaluate(self, node: ast.expr, statement: ast.stmt) -> Binding | None:
        if isinstance(node, ast.Name):
            return self._binding(node.id)
        if isinstance(node, ast.Call):
            return self._call(node, statement)
        if isinstance(node, ast.BinOp):
            left, right = self._value(node.left, statement), self._value(node.right, statement)
            return self._binary(node, left, right, statement)
        if isinstance(node, ast.Subscript):
            base = self._value(node.value, statement)
            self._value(node.slice, statement)
            if isinstance(node.value, ast.Name) and node.value.id in self.lists:
                # an item of a Python list: its own tensor, not a view of the list
                return Binding(Counter(), base.grad, base.graph) if base else None
            if base is not None and _basic_index(node.slice, self.integers):
                return Binding(base.counter, base.grad, base.graph)  # a view
            return Binding(Counter(), base.grad, base.graph) if base else None
        if isinstance(node, ast.Attribute):
            if node.attr in GRAPHLESS_ATTRIBUTES:
                return None
            if _self_attribute(node):
                built = self.modules.get(node.attr)
                weight = built is not None and _kind(built, self.symbols) == "Parameter"
                return Binding(Counter(), True) if weight else None
            return self._value(node.value, statement)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = self._value(node.operand, statement)
            return Binding(Counter(), inner.grad, inner.graph) if inner else None
        results = [self._value(child, statement) for child in _sub_expressions(node)]
        if isinstance(node, ast.Compare | ast.BoolOp):
            return None
        known = [r for r in results if r is not None]
        return _fresh(known) if known else None

    def _binary(self, node, left, right, statement) -> Binding | None:
        known = [b for b in (left, right) if b is not None]
        made: set[int] = set()
        if isinstance(node.op, ast.Mult | ast.MatMult) and left and right:
            verb = "`@`" if isinstance(node.op, ast.MatMult) else "`*`"
            for saved, other in ((left, right), (right, left)):
                if other.grad:  # each operand is kept for the other's gradient
                    made.add(self._save(saved, node, statement, f"{verb} keeps its operands"))
        if isinstance(node.op, ast.Pow) and left is not None and left.grad:
            made.add(self._save(left, node, statement, "`**` keeps its base"))
        return _fresh(known, frozenset(made)) if known else None

    def _call(self, node: ast.Call, statement: ast.stmt) -> Binding | None:
        func = node.func
        dotted = dotted_name(func) or ""
        is_function = dotted.split(".")[0] in self.symbols.imports or isinstance(func, ast.Name)
        receiver = None
        if isinstance(func, ast.Attribute) and not is_function and not _self_attribute(func):
            receiver = self._value(func.value, statement)
        args = [self._value(a, statement) for a in node.args]
        keywords = {k.arg: self._value(k.value, statement) for k in node.keywords}
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        first = args[0] if args else None
        helper = self._mutating_helper(func, node) if first is None and keywords else None
        if helper is not None:
            first = keywords.get(_first_parameter(helper))
        if receiver is not None:  # a tensor method: `x.sigmoid()`, `x.view(...)`, `x.add_(r)`
            if name == "detach":
                return Binding(receiver.counter)  # the same version counter, no graph
            if name in GRAPHLESS_METHODS:
                return None
            if name in VIEW_METHODS or name in IN_PLACE_METHODS:
                changed = Binding(receiver.counter, receiver.grad, receiver.graph)
                return self._keeps_changed(name[:-1], changed, node, statement, f"`.{name}()`")
            operation = FUNCTION_OPERATIONS.get(name, name)
            return self._apply(operation, receiver, node, statement, f"`.{name}()`")
        if name in REPORTING_CALLS and isinstance(func, ast.Name):
            return None
        layer = self._layer(func)
        if layer is not None:
            return self._layer_call(layer, func, first, node, statement)
        qualified = self.symbols.qualify(func) or ""
        if qualified.startswith("torch."):
            base = qualified.rsplit(".", 1)[-1]
            if base in GRAPHLESS_METHODS or base.endswith("_like"):
                return None
            if _inplace_switched(node, base, qualified) or base.endswith("_"):
                if first is None:
                    return None
                changed = Binding(first.counter, first.grad, first.graph)
                return self._keeps_changed(base.rstrip("_"), changed, node, statement, dotted)
            operation = FUNCTION_OPERATIONS.get(base, base)
            if operation in RESULT_SAVED | INPUT_SAVED | LAYER_INPUT_SAVED and first:
                return self._apply(operation, first, node, statement, f"`{dotted}`")
            known = [b for b in args if b is not None]
            return _fresh(known) if known else None
        if self._is_trained_model(func) or (self.owner is not None and _own_forward(func)):
            # `model(x)` in training code; `self(x)`, `self.forward(x)`: the module's own
            # forward (SAC's `mean, log_std = self.forward(state)` in `sample`)
            return Binding(Counter(), True, _union(args))
        if first is not None and self._mutating_helper(func, node) is not None:
            # what it returns is computed from the tensor it changed (often that tensor)
            return Binding(Counter(), first.grad, first.graph)
        return None

    def _apply(self, operation: str, source: Binding, node, statement, shown) -> Binding:
        """`operation` applied to `source`: saves when the source requires grad."""
        result = Binding(Counter(), source.grad, source.graph)
        if self.no_grad:
            return Binding(Counter())
        if not source.grad:
            return result
        if operation in RESULT_SAVED:
            made = self._save(result, node, statement, f"{shown} keeps its result")
        elif operation in INPUT_SAVED | LAYER_INPUT_SAVED:
            made = self._save(source, node, statement, f"{shown} keeps its input")
        else:
            return result
        return Binding(result.counter, True, result.graph | {made})

    def _keeps_changed(self, operation, changed: Binding, node, statement, shown) -> Binding:
        """After an in-place activation (`x.relu_()`, `F.relu(x, inplace=True)`): it keeps
        the result it wrote, when the tensor requires grad."""
        if self.no_grad or not changed.grad or operation not in INPLACE_RESULT_SAVED | RESULT_SAVED:
            return changed
        made = self._save(changed, node, statement, f"`{shown.strip('`')}` keeps its result")
        return Binding(changed.counter, True, changed.graph | {made})

    def _layer_call(self, layer, func, first, node, statement, within="") -> Binding:
        """A call of a module the class (or the function) builds: `self.bn1(out)`; for an
        `nn.Sequential`, each of its layers in turn (`within`: the layer's place in it)."""
        kind, built, info = layer
        first = first if first is not None else Binding(Counter())
        if info is not None:  # one of the project's own modules
            weighted = _builds_weights(info, self.symbols)
            result = Binding(Counter(), weighted or first.grad, first.graph)
            frozen = dotted_name(func) in self.symbols.frozen or self._frozen_attribute(func)
            kept = forward_keeps_result(info, self.symbols)
            if kept is None or not weighted or frozen or self.no_grad:
                return result
            shown = f"`{dotted_name(func)}` ({info.node.name}, whose `forward` ends with {kept})"
            made = self._save(result, node, statement, f"{shown} keeps its result")
            return Binding(result.counter, True, result.graph | {made})
        if kind == "Sequential" and self._followed_sequential(func, built):
            return self._sequential_call(built, func, first, node, statement)
        shown = f"`{dotted_name(func)}` ({within}{kind})"
        operation = MODULE_OPERATIONS.get(kind)
        if kind in INPLACE_MODULES and _inplace_constructor(built) is not None:
            if operation in INPLACE_RESULT_SAVED and first.grad:
                made = self._save(first, node, statement, f"{shown} keeps its result")
                return Binding(first.counter, True, first.graph | {made})
            return first
        frozen = dotted_name(func) in self.symbols.frozen or self._frozen_attribute(func)
        weighted = kind in WEIGHTED_MODULES and not frozen
        if kind == "Sequential":
            layers = built.args
            weighted = not frozen and any(
                _kind(e, self.symbols) in WEIGHTED_MODULES for e in layers
            )
        grad = first.grad or weighted
        made = None
        keeps_input = (operation in LAYER_INPUT_SAVED and grad) or (
            operation in WEIGHT_INPUT_SAVED and weighted
        )
        if keeps_input:
            made = self._save(first, node, statement, f"{shown} keeps its input")
        elif operation is not None:
            return self._apply(operation, first, node, statement, shown)
        graph = first.graph | ({made} if made is not None else set())
        return Binding(Counter(), grad, frozenset(graph))

    def _sequential_call(self, built: ast.Call, func, first: Binding, node, statement):
        """`self.block(x)` with `self.block = nn.Sequential(nn.Conv2d(...), nn.ReLU())`: the
        layers applied in order, so that the block keeps what its layers keep (its input for a
        first convolution, its result for a last ReLU) and changes what its first in-place
        layer changes. Layers loopfix does not know end the walk: what they return is a new
        tensor that nothing is known to keep."""
        current, count_ = first, len(built.args)
        for position, element in enumerate(built.args):
            kind = _kind(element, self.symbols)
            if kind == "Identity":
                continue  # returns its argument
            if kind is None or kind in VIEWING_MODULES:
                weighted = self._sequential_weighted(func, built)
                return Binding(Counter(), current.grad or weighted, current.graph)
            layer = (kind, element, None)
            if count_ == 1:
                within = ""
            elif position == 0:
                within = "its first layer, "
            elif position == count_ - 1:
                within = "its last layer, "
            else:
                within = f"its layer {position}, "
            current = self._layer_call(layer, func, current, node, statement, within)
        return current

    def _inplace_layer(self, layer, func: ast.expr) -> ast.Call | None:
        """The constructor of the in-place layer that changes the module's argument: the
        module's own (`nn.ReLU(inplace=True)`), or an `nn.Sequential`'s first layer's
        (`nn.Sequential(nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(...))`)."""
        kind, built, info = layer
        while info is None and kind == "Sequential" and self._followed_sequential(func, built):
            built = next(e for e in built.args if _kind(e, self.symbols) != "Identity")
            kind = _kind(built, self.symbols)
        if info is None and kind in INPLACE_MODULES and _inplace_constructor(built) is not None:
            return built
        return None

    def _sequential_weighted(self, func, built: ast.Call) -> bool:
        frozen = dotted_name(func) in self.symbols.frozen or self._frozen_attribute(func)
        return not frozen and any(_kind(e, self.symbols) in WEIGHTED_MODULES for e in built.args)

    def _followed_sequential(self, func: ast.expr, built: ast.Call) -> bool:
        """An `nn.Sequential` built from its layers' constructors, never changed afterwards
        (`self.block.append(...)`, `self.block[0] = ...`, `add_module`): its layers are the
        calls in the constructor, in order."""
        if not built.args or built.keywords:
            return False
        if not all(isinstance(e, ast.Call) for e in built.args):
            return False  # `*layers`, a shared module (`self.act`), an `OrderedDict`
        in_class = self.owner is not None and _self_attribute(func)
        scope = self.owner.node if in_class else self.function
        key = ("sequentials changed", id(scope))
        return dotted_name(func) not in self.symbols.remember(key, _changed_sequentials, scope)

    def _frozen_attribute(self, func: ast.expr) -> bool:
        """`self.enc` whose parameters the class sets `requires_grad` False on anywhere
        (`self.enc.weight.requires_grad = False`, a loop over `self.enc.parameters()`), or
        the file does through a path ending in it (`model.enc.requires_grad_(False)`)."""
        if self.owner is None or not _self_attribute(func):
            return False
        if self._frozen is None:
            key = ("attributes the class freezes", id(self.owner.node))
            self._frozen = set(self.symbols.remember(key, _frozen_attributes, self.owner.node))
            tree = self.symbols.tree
            if tree is not None:  # frozen by the training code: `model.b1.requires_grad_(False)`
                key = ("attributes frozen through a path", id(tree))
                self._frozen |= self.symbols.remember(key, _frozen_anywhere, tree)
        return func.attr in self._frozen

    def _layer(self, func: ast.expr):
        """(torch.nn class name, its constructor call, the project class or None) for
        `self.<attr>` / a local name the scope builds a module into."""
        if _self_attribute(func):
            key = ("self", func.attr)
        elif isinstance(func, ast.Name):
            key = ("name", func.id)
        else:
            return None
        if key not in self._layers:  # asked again for every call of the layer
            self._layers[key] = self._find_layer(key)
        return self._layers[key]

    def _find_layer(self, key: tuple[str, str]):
        kind, name = key
        if kind == "self":
            built = self.modules.get(name)
        else:
            if self._local_modules is None:  # walked only when a name is called
                self._local_modules = _local_constructors(self.function)
            built = self._local_modules.get(name)
        if built is None:
            return None
        kind = _kind(built, self.symbols)
        if kind is not None:
            return kind, built, None
        info = _project_class(built, self.symbols)
        return (info.node.name, built, info) if info is not None else None

    def _mutating_helper(
        self, func: ast.expr, call: ast.Call | None = None
    ) -> ast.FunctionDef | None:
        """A project function or a method of the class, not a layer, that changes its first
        argument in place (`add_noise_(h)`, `utils.normalize(x)`, `self._mask(scores)`), at
        `call` where given (`mask_probs(probs, mask)` runs `if mask is not None:`)."""
        function = None
        if isinstance(func, ast.Name):
            function = self.symbols.functions.get(func.id)
        elif _self_attribute(func) and self.owner is not None and func.attr not in self.modules:
            function = self.symbols.method(self.owner, func.attr)
        elif isinstance(func, ast.Attribute):
            member = self.symbols.member(func)
            function = member if isinstance(member, ast.FunctionDef) else None
        if not isinstance(function, ast.FunctionDef):
            return None
        home = self.symbols.home(function)
        owner = self.owner if _self_attribute(func) else None
        given = frozenset()
        tests = home.remember(("none tests", id(function)), _none_tests, function)
        if call is not None and tests:  # `if mask is not None:` in its body
            given = _given(call, function, self._maybe_none())
        return function if mutates_first_argument(function, home, owner, given) else None

    def _maybe_none(self) -> frozenset[str] | None:
        """The names of the function being run that may hold `None` (`_maybe_none_names`),
        read once; None before a function is run."""
        function = getattr(self, "function", None)
        if function is None:
            return None
        return self.symbols.remember(("maybe None", id(function)), _maybe_none_names, function)

    def _is_trained_model(self, func: ast.expr) -> bool:
        """`model(x)` in a training function: a module whose parameters something takes
        (`model.parameters()`), and that is not frozen."""
        name = dotted_name(func)
        if name is None or name in self.symbols.frozen:
            return False
        return name.rpartition(".")[2] in self.symbols.module_evidence

    def _save(self, binding: Binding, node, statement, operation: str) -> int:
        save = Save(next(self.ids), node, statement, operation)
        binding.counter.saves.append(save)
        return save.id

    # -- in-place changes ---------------------------------------------------------------
    def _in_place(self, statement: ast.stmt, node: ast.AST, result: Binding | None) -> None:
        target = _changed_target(node, self.symbols, self)
        var = _root_name(target) if target is not None else None
        unnamed = target if var is None and id(target) in self.values else None
        if unnamed is not None:  # a tensor without a name: `self.block2(self.block1(x))`
            var, binding = ast.unparse(unnamed), self.values[id(unnamed)]
        elif var is None or var not in self.env:
            return
        elif isinstance(node, ast.Subscript) and var in self.lists:
            return  # `hs[t + 1] = ...` stores into a Python list: no tensor changes
        else:
            binding = self.env[var]
        saves = [s for s in binding.counter.saves if _before_change(s, statement, node)]
        if not saves:
            return
        binding.counter.saves[:] = [s for s in binding.counter.saves if s not in saves]
        how, switch = _change_kind(node, self)
        if switch is not None and not self._switch_keeps_values(how, statement, node):
            switch = None  # `inplace=False` would leave a name the change reached unchanged
        change = InPlaceChange(statement, node, var, saves[0], how, switch)
        change.unnamed = unnamed
        change.saved_here = any(s.statement is statement for s in saves)
        change.without_grad = self.no_grad
        aliases = sorted(
            name
            for name, other in self.env.items()
            if name != var
            and other.counter is binding.counter
            and self._read_after(name, statement)
        )
        if aliases:
            change.alias = aliases[0]
        change.kept_in = binding.counter.escaped
        at_risk = frozenset(s.id for s in saves)
        self.candidates.append(_Candidate(change, at_risk))

    def _switch_keeps_values(self, how: str, statement: ast.stmt, node: ast.Call) -> bool:
        """Whether turning the change out-of-place (`inplace=False`) keeps every value the
        code reads: the call rebinds its argument's name to its result (`out =
        self.relu(out)`) or its argument is not a name read again, and, for a module's
        constructor, the module is called nowhere else."""
        if how == "keyword":
            return _rebinds_argument(statement, node) or not self._argument_read_later(node)
        scope = self.owner.node if self.owner is not None else self.function
        called = syntax_key(node.func)
        calls = [n for n in walk(scope) if isinstance(n, ast.Call) and syntax_key(n.func) == called]
        # another call of the same module may rely on its in-place change (an alias of its
        # argument read later): only a module called here alone is switched
        return calls == [node] and (
            _rebinds_argument(statement, node) or not self._argument_read_later(node)
        )

    def _argument_read_later(self, node: ast.Call) -> bool:
        first = node.args[0] if node.args else None
        if not isinstance(first, ast.Name):
            return False
        end = (node.end_lineno, node.end_col_offset)
        return any(
            isinstance(n, ast.Name) and n.id == first.id and (n.lineno, n.col_offset) > end
            for n in walk(self.function)
        )

    def _read_after(self, name: str, statement: ast.stmt) -> bool:
        end = (statement.end_lineno, statement.end_col_offset)
        return any(
            isinstance(n, ast.Name)
            and n.id == name
            and isinstance(n.ctx, ast.Load)
            and (n.lineno, n.col_offset) > end
            for n in walk(self.function)
        )

    def _confirm_reads(self, node: ast.AST) -> None:
        """A read of a value whose graph goes through a changed tensor's saver: the
        backward will reach the saver. A module's methods hand their values to a backward
        outside: the read confirms. In training code, a backward must come after the read
        (what a loop computes for logging after its only backward is never
        backpropagated), and where that backward's loss is a name whose graph is known, the
        loss's graph must go through the saver (an entropy computed from changed softmax
        probabilities for a metric, beside a loss from the logits, is never
        backpropagated); reads are confirmed at the backward."""
        if self.returns_to_backward:
            for name in _graph_reads(node):
                binding = self.env.get(name)
                if binding is not None:
                    self._confirm_graph(binding.graph)
            return
        if self._backward_after(node):
            for name in _graph_reads(node):
                binding = self.env.get(name)
                if binding is not None:
                    self.pending |= binding.graph
        for loss in _backward_losses(node):
            graph = self._loss_graph(loss)
            self._confirm_graph(self.pending if graph is None else graph)

    def _loss_graph(self, loss: ast.expr) -> frozenset[int] | None:
        """The graph of a backward's loss when it is a name bound in this scope to a value
        no container or attribute took (else None: not known whole)."""
        binding = self.env.get(loss.id) if isinstance(loss, ast.Name) else None
        if binding is None or binding.counter.escaped:
            return None
        return binding.graph

    def _confirm_graph(self, graph: frozenset[int]) -> None:
        for candidate in self.candidates:
            if candidate.at_risk & graph:
                candidate.confirmed = True

    def _backward_after(self, node: ast.AST) -> bool:
        if not hasattr(self, "_backwards"):
            self._backwards = [
                (n.lineno, n.col_offset)
                for n in walk(self.function)
                if isinstance(n, ast.Call)
                and (getattr(n.func, "attr", None) or getattr(n.func, "id", None))
                in ("backward", "grad", "manual_backward")
            ]
        end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
        return any(position > end for position in self._backwards)


def _fresh(known: list[Binding], saves: frozenset[int] = frozenset()) -> Binding:
    return Binding(Counter(), any(b.grad for b in known), _union(known) | saves)


def _union(bindings) -> frozenset[int]:
    graph: frozenset[int] = frozenset()
    for binding in bindings:
        if binding is not None:
            graph |= binding.graph
    return graph


def _before_change(save: Save, statement: ast.stmt, node: ast.AST) -> bool:
    """Whether the save happened before `node` changed the tensor: in an earlier statement,
    in the value of an assignment that stores into it (evaluated first), in the changing
    call's own arguments, or in a call evaluated before it; not by the changing call itself
    (an in-place activation keeps its result after changing it), nor by a call around it,
    which runs once its arguments are computed (`self.conv1(self.relu(self.bn1(x)))`: the
    convolution keeps the tensor the in-place ReLU has already changed)."""
    if save.statement is not statement or isinstance(node, ast.AugAssign | ast.Subscript):
        return True
    if save.call is node:
        return False
    if any(save.call is n for n in walk(node)):
        return True
    if any(node is n for n in walk(save.call)):
        return False
    return (save.call.lineno, save.call.col_offset) < (node.lineno, node.col_offset)


# -- in-place forms -------------------------------------------------------------------------


def _in_place_nodes(statement: ast.stmt) -> list[ast.AST]:
    """The nodes of `statement` that may change a tensor in place, in source order."""
    found: list[ast.AST] = []
    if isinstance(statement, ast.AugAssign):
        found.append(statement)
    elif isinstance(statement, ast.Assign):
        found += [t for t in statement.targets if isinstance(t, ast.Subscript)]
    value = getattr(statement, "value", None)
    if value is not None:
        found += [n for n in walk(value) if isinstance(n, ast.Call)]
    return found


def _changed_name(node: ast.AST, symbols: Symbols, scope: _Scope | None = None) -> str | None:
    """The name of the tensor `node` changes in place, or None."""
    target = _changed_target(node, symbols, scope)
    return _root_name(target) if target is not None else None


def _changed_target(
    node: ast.AST, symbols: Symbols, scope: _Scope | None = None
) -> ast.expr | None:
    """The expression whose tensor `node` changes in place (`out` in `out += r`, `x` in
    `x.clamp_(0, 1)`, `self.block1(x)` in `self.block2(self.block1(x))`), or None."""
    if isinstance(node, ast.AugAssign):
        return node.target
    if isinstance(node, ast.Subscript):
        return node.value
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and func.attr in IN_PLACE_METHODS
        and not _self_attribute(func)
        and symbols.qualify(func) == dotted_name(func)
    ):
        return func.value
    qualified = symbols.qualify(func) or ""
    base = qualified.rsplit(".", 1)[-1]
    if (
        node.args
        and qualified.startswith("torch.")
        and (
            _inplace_switched(node, base, qualified)
            or (base.endswith("_") and base[:-1] in RESULT_SAVED | INPUT_SAVED)
        )
    ):
        return node.args[0]
    if scope is not None and node.args:
        layer = scope._layer(func)
        if layer is not None:
            kind, built, info = layer
            if scope._inplace_layer(layer, func) is not None:
                return node.args[0]
            forward = scope.symbols.method(info, "forward") if info is not None else None
            home = scope.symbols.home(forward) if forward is not None else None
            if forward is not None and mutates_first_argument(forward, home, info):
                return node.args[0]
        elif scope._mutating_helper(func, node) is not None:
            return node.args[0]
    if scope is not None and not node.args and node.keywords:
        helper = scope._mutating_helper(func, node)  # `self._drop_padding(pad=pad, attn=attn)`
        first = _first_parameter(helper) if helper is not None else None
        given = next((k.value for k in node.keywords if k.arg == first), None)
        if given is not None:
            return given
    return None


def _first_parameter(function: ast.FunctionDef) -> str | None:
    names = [a.arg for a in function.args.args]
    names = names[1:] if names and names[0] == "self" else names
    return names[0] if names else None


def _change_kind(node: ast.AST, scope: _Scope) -> tuple[str, ast.expr | None]:
    if isinstance(node, ast.AugAssign):
        return ("augmented" if isinstance(node.target, ast.Name) else "subscript"), None
    if isinstance(node, ast.Subscript):
        return "subscript", None
    func = node.func
    if isinstance(func, ast.Attribute) and func.attr in IN_PLACE_METHODS:
        return "method", None
    layer = scope._layer(func)
    if layer is not None:
        kind, built, info = layer
        if info is None:
            return "module", _inplace_constructor(scope._inplace_layer(layer, func))
        return "callee", None
    if scope._mutating_helper(func, node) is not None:
        return "callee", None
    return "keyword", _inplace_argument(node)


def _rebinds_argument(statement: ast.stmt, call: ast.Call) -> bool:
    """`x = F.relu(x, inplace=True)`: the result takes its argument's name."""
    first = call.args[0] if call.args else None
    return (
        isinstance(statement, ast.Assign)
        and statement.value is call
        and isinstance(first, ast.Name)
        and [dotted_name(t) for t in statement.targets] == [first.id]
    )


def _nonzero_probability(call: ast.Call, position: int = 0) -> bool:
    """The dropout probability of `nn.Dropout(p)` (`position` 0) or `F.dropout(x, p)` (1) is
    a literal above 0, or left at its default (0.5)."""
    given = next((k.value for k in call.keywords if k.arg == "p"), None)
    if given is None and len(call.args) > position:
        given = call.args[position]
    if given is None:
        return True
    literal = isinstance(given, ast.Constant) and isinstance(given.value, int | float)
    return literal and given.value > 0


def _inplace_switched(node: ast.Call, base: str, qualified: str) -> bool:
    """`F.relu(x, inplace=True)` (or the flag passed by position); a dropout only with a
    nonzero literal probability."""
    if base not in INPLACE_KEYWORD or ".functional." not in f".{qualified}":
        return False
    if "dropout" in base and not _nonzero_probability(node, position=1):
        return False
    flag = _inplace_argument(node)
    return isinstance(flag, ast.Constant) and flag.value is True


def _inplace_argument(node: ast.Call) -> ast.expr | None:
    qualified_base = dotted_name(node.func) or ""
    base = qualified_base.rsplit(".", 1)[-1]
    for keyword in node.keywords:
        if keyword.arg == "inplace":
            return keyword.value
    position = INPLACE_KEYWORD.get(base)
    if position is not None and len(node.args) > position:
        return node.args[position]
    return None


def _inplace_constructor(built: ast.Call) -> ast.expr | None:
    """The `inplace=True` argument of `nn.ReLU(inplace=True)` / `nn.LeakyReLU(0.2, True)`; for
    a dropout, only with a probability that is a nonzero literal (or the default): with `p` a
    variable it may be 0, and a dropout of 0 changes nothing."""
    name = (dotted_name(built.func) or "").rsplit(".", 1)[-1]
    if "Dropout" in name and not _nonzero_probability(built):
        return None
    for keyword in built.keywords:
        if keyword.arg == "inplace":
            return keyword.value if _true(keyword.value) else None
    position = {"ReLU": 0, "ReLU6": 0, "SELU": 0, "SiLU": 0, "Hardswish": 0, "Mish": 0,
                "Hardsigmoid": 0, "LeakyReLU": 1, "ELU": 1, "CELU": 1, "Dropout": 1,
                "Dropout1d": 1, "Dropout2d": 1, "Dropout3d": 1, "AlphaDropout": 1,
                "Threshold": 2, "Hardtanh": 2, "RReLU": 2}.get(name)  # fmt: skip
    if position is not None and len(built.args) > position and _true(built.args[position]):
        return built.args[position]
    return None


def _true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


# -- small questions about the tree --------------------------------------------------------


def _root_name(node: ast.expr) -> str | None:
    """`x` for `x`, `x[idx]`, `x[:, 0]`, `x.view(-1)[i]` (the tensor whose storage changes)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Subscript):
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in VIEW_METHODS
        ):
            node = node.func.value
        else:
            return None


def _own_forward(func: ast.expr) -> bool:
    """`self` or `self.forward`, called."""
    if isinstance(func, ast.Attribute) and func.attr == "forward":
        func = func.value
    return isinstance(func, ast.Name) and func.id == "self"


def _self_attribute(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _basic_index(index: ast.expr, integers: set[str]) -> bool:
    """Slices and integers index a view; tensors and lists index a copy. `integers`: the
    names known to hold an int (`for t in range(T)`), also in `t + 1`."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(
        isinstance(p, ast.Slice)
        or (isinstance(p, ast.Constant) and p.value in (None, ...))
        or _integer(p, integers)
        for p in parts
    )


def _is_list(value: ast.expr) -> bool:
    """`[]`, `[None] * n`, `[... for ...]`, `list(...)`: a Python list, not a tensor."""
    if isinstance(value, ast.List | ast.ListComp):
        return True
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult | ast.Add):
        return _is_list(value.left) or _is_list(value.right)
    return isinstance(value, ast.Call) and getattr(value.func, "id", "") == "list"


def _integer(node: ast.expr, integers: set[str]) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool)
    if isinstance(node, ast.Name):
        return node.id in integers
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _integer(node.operand, integers)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult):
        return _integer(node.left, integers) and _integer(node.right, integers)
    return False


def _loop_integers(loop: ast.For | ast.AsyncFor) -> set[str]:
    """The names a loop binds to ints: `t` in `for t in range(T)`, `i` in `for i, batch in
    enumerate(loader)`."""
    call = loop.iter
    name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else ""
    if name == "range" and isinstance(loop.target, ast.Name):
        return {loop.target.id}
    target = loop.target
    if name == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
        first = target.elts[0]
        return {first.id} if isinstance(first, ast.Name) else set()
    return set()


def _direct_names(node: ast.expr) -> list[str]:
    """`out` in `out`, `(out, y)`, `[out]`: names whose tensor itself is stored."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [n for e in node.elts for n in _direct_names(e)]
    if isinstance(node, ast.Dict):
        return [n for e in node.values for n in _direct_names(e)]
    return []


def _sub_expressions(node: ast.expr) -> list[ast.expr]:
    return [c for c in child_nodes(node) if isinstance(c, ast.expr)]


BACKWARD_CALLS = frozenset({"backward", "grad", "manual_backward"})
AUTOGRAD = frozenset({"torch.autograd", "autograd"})  # `torch.autograd.backward(loss)`


def _backward_losses(node: ast.AST) -> list[ast.expr]:
    """The losses the backward calls in `node` go through: `loss` in `loss.backward()`,
    `torch.autograd.backward(loss)`, `torch.autograd.grad(loss, ...)`,
    `self.manual_backward(loss)`."""
    losses = []
    for call in walk(node):
        if not isinstance(call, ast.Call):
            continue
        func = call.func
        name = getattr(func, "attr", None) or getattr(func, "id", None)
        if name not in BACKWARD_CALLS:
            continue
        receiver = dotted_name(func.value) if isinstance(func, ast.Attribute) else None
        if name == "backward" and isinstance(func, ast.Attribute) and receiver not in AUTOGRAD:
            losses.append(func.value)  # `loss.backward(gradient)` too
        elif call.args:
            losses.append(call.args[0])
        else:
            losses.append(func)  # a loss given by keyword: not known whole
    return losses


def _graph_reads(node: ast.AST) -> list[str]:
    """Names `node` reads into a computation: not those only printed, measured or detached."""
    reads: list[str] = []
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Call):
            name = getattr(current.func, "id", None) or getattr(current.func, "attr", "")
            if name in REPORTING_CALLS or name in GRAPHLESS_METHODS:
                continue
        if isinstance(current, ast.Attribute) and current.attr in GRAPHLESS_ATTRIBUTES:
            continue
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(current, ast.Compare):
            continue  # a boolean result: no graph
        if isinstance(current, ast.Subscript) and isinstance(current.ctx, ast.Store):
            stack.append(current.slice)  # `x[mask] = v` writes into `x`, it reads the mask
            continue
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Load):
            reads.append(current.id)
        stack.extend(child_nodes(current))
    return reads


def _assigned_names(statements: list[ast.stmt]) -> set[str]:
    """Names the statements bind to something new (`x += r` changes `x`, it keeps it)."""
    names = set()
    augmented: set[int] = set()
    for statement in statements:
        for node in walk(statement):  # an `x += r` before its target `x`: parents come first
            if isinstance(node, ast.AugAssign):
                augmented.add(id(node.target))
            elif (
                isinstance(node, ast.Name)
                and isinstance(node.ctx, ast.Store | ast.Del)
                and id(node) not in augmented
            ):
                names.add(node.id)
    return names


def _mentions(node: ast.AST, words: frozenset[str]) -> bool:
    return any(
        (isinstance(n, ast.Attribute) and n.attr in words)
        or (isinstance(n, ast.Name) and n.id in words)
        for n in walk(node)
    )


def _is_no_grad(node: ast.expr, symbols: Symbols) -> bool:
    call = node if isinstance(node, ast.Call) else None
    func = call.func if call else node
    base = (symbols.qualify(func) or "").rsplit(".", 1)[-1]
    if base in NO_GRAD_CONTEXTS:
        return True
    return base == "set_grad_enabled" and not (call and call.args and _true(call.args[0]))


def _no_grad(function, symbols: Symbols) -> bool:
    """Decorated with `torch.no_grad()` / `torch.inference_mode()`."""
    return any(_is_no_grad(d, symbols) for d in function.decorator_list)


def _attribute_constructors(info: ClassInfo, symbols: Symbols) -> dict[str, ast.Call]:
    """`self.<attr> = <call>` in the class's `__init__` and its project bases', when the
    attribute is built exactly once."""
    built: dict[str, ast.Call] = {}
    seen: set[str] = set()
    for cls in [*symbols.file_bases(info), info]:
        init = cls.methods.get("__init__")
        if init is None:
            continue
        for node in walk(init):
            if not isinstance(node, ast.Assign | ast.AnnAssign):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target, value in _pairs(targets, node.value):
                if _self_attribute(target):
                    if target.attr in seen and cls is info and target.attr in built:
                        built.pop(target.attr)
                        continue
                    seen.add(target.attr)
                    if isinstance(value, ast.Call):
                        built[target.attr] = value
    return built


def _pairs(targets: list[ast.expr], value: ast.expr | None) -> list[tuple]:
    """(target, value) of an assignment, item by item for `self.W, self.U = A(), B()`."""
    pairs = []
    for target in targets:
        same = isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple)
        if same and len(target.elts) == len(value.elts):
            pairs += list(zip(target.elts, value.elts, strict=True))
        else:
            pairs.append((target, value))
    return pairs


_BLOCK_FIELDS = ("body", "orelse", "finalbody")


FREEZING_ATTRIBUTES = frozenset({"requires_grad", "requires_grad_"})


def _frozen_attributes(cls: ast.ClassDef) -> set[str]:
    """Attributes of `self` whose parameters the class sets `requires_grad` False on."""
    return {n.split(".")[1] for n in _frozen_owners(cls) if n.startswith("self.")}


def _frozen_anywhere(tree: ast.Module) -> set[str]:
    """Attribute names of modules whose parameters the file sets `requires_grad` False on
    through a path (`model.b1.requires_grad_(False)`, `for p in model.enc.parameters()`,
    `net.fc.weight.requires_grad = False`): every name after the first, since which class's
    attribute the path goes through is not followed (`self.b1` may be the frozen one)."""
    return {part for n in _frozen_owners(tree) for part in n.split(".")[1:]}


def _frozen_owners(scope: ast.AST) -> set[str]:
    """Dotted names of the modules the scope sets `requires_grad` False on."""
    frozen: set[str] = set()
    nodes = list(walk(scope))
    if not any(isinstance(n, ast.Attribute) and n.attr in FREEZING_ATTRIBUTES for n in nodes):
        return frozen  # every way below names one (most scopes: one walk, not one per loop)
    for node in nodes:
        owner = None
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets
        ):
            owner = next(t for t in node.targets if isinstance(t, ast.Attribute)).value
            if isinstance(node.value, ast.Constant) and node.value.value is False:
                owner = owner if not isinstance(owner, ast.Name) else None
            else:
                owner = None
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "requires_grad_"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value is False
        ):
            owner = node.func.value
        elif (
            isinstance(node, ast.For)
            and isinstance(node.iter, ast.Call)
            and isinstance(node.iter.func, ast.Attribute)  # `model.enc.parameters()`
        ):
            below = list(walk(node))
            sets_false = any(isinstance(n, ast.Constant) and n.value is False for n in below)
            if sets_false and any(
                isinstance(n, ast.Attribute) and n.attr in FREEZING_ATTRIBUTES for n in below
            ):
                owner = node.iter.func.value
        name = dotted_name(owner) if owner is not None else None
        if name:
            frozen.add(name)
    return frozen


def _changed_sequentials(scope: ast.AST) -> set[str]:
    """The paths the scope changes as a container (`self.block.append(...)`, `add_module`,
    `self.block[0] = ...`, `del self.block[0]`)."""
    changed = set()
    for n in walk(scope):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in SEQUENTIAL_CHANGES
        ):
            changed.add(dotted_name(n.func.value))
        elif isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store | ast.Del):
            changed.add(dotted_name(n.value))
    return changed - {None}


def _local_constructors(scope: ast.AST) -> dict[str, ast.Call]:
    """Names the scope binds exactly once to a constructor call (`act = nn.ReLU(True)`, also
    an item of a tuple assigned item by item)."""
    built: dict[str, ast.Call] = {}
    counts: dict[str, int] = {}
    for node in walk(scope):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            counts[node.id] = counts.get(node.id, 0) + 1
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        # `head = nn.Linear(6, 1)`, and item by item `cell, head = nn.GRUCell(...), nn.Linear(...)`
        for target, value in _pairs(node.targets, node.value):
            if isinstance(target, ast.Name) and isinstance(value, ast.Call):
                name = dotted_name(value.func) or ""
                if name.rsplit(".", 1)[-1][:1].isupper():
                    built[target.id] = value
    return {k: v for k, v in built.items() if counts.get(k) == 1}


def _kind(built: ast.expr, symbols: Symbols) -> str | None:
    """The torch.nn class a constructor call builds (`nn.ReLU(inplace=True)` -> "ReLU")."""
    if not isinstance(built, ast.Call):
        return None
    qualified = symbols.qualify(built.func) or ""
    if not qualified.startswith("torch.nn."):
        return None
    return qualified.rsplit(".", 1)[-1]


def forward_keeps_result(info: ClassInfo, symbols: Symbols) -> str | None:
    """For a project `nn.Module` class whose own `forward` ends with `return <expr>` (its
    only return) and whose result an operation there keeps for the backward (`return
    self.net(x)` with `self.net = nn.Sequential(nn.Linear(6, 16), nn.Tanh())`): that
    operation, as messages show it (`` `self.net` (its last layer, Tanh) ``); else None.
    Read with the argument not requiring grad, so the layer's weights are what make it
    kept. Answered once per class (a class that reaches itself again counts as keeping
    nothing)."""
    home = symbols.home(info.node)
    key = ("forward keeps its result", id(info.node))
    if key in home.facts:
        return home.facts[key]
    home.facts[key] = None
    home.facts[key] = answer = _forward_keeps_result(info, home)
    return answer


def _forward_keeps_result(info: ClassInfo, symbols: Symbols) -> str | None:
    forward = info.methods.get("forward")
    if forward is None or not forward.body or not isinstance(forward.body[-1], ast.Return):
        return None
    returned = forward.body[-1].value
    returns = [n for n in walk(forward) if isinstance(n, ast.Return)]
    if returned is None or len(returns) != 1:
        return None
    parameters = [a.arg for a in forward.args.args]
    scope = _Scope(symbols, info, _attribute_constructors(info, symbols))
    scope.function, scope.returns_to_backward = forward, False
    for name in parameters[1:]:
        scope.env[name] = Binding(Counter())
    scope._block(forward.body[:-1])
    result = scope._value(returned, forward.body[-1])
    saves = result.counter.saves if result is not None else []
    suffix = " keeps its result"
    kept = [s.operation for s in saves if s.operation.endswith(suffix)]
    return kept[-1].removesuffix(suffix) if kept else None


def _project_class(built: ast.Call, symbols: Symbols) -> ClassInfo | None:
    name = dotted_name(built.func)
    if name is None:
        return None
    info = symbols.class_named(name) if "." not in name else symbols.member(built.func)
    return info if isinstance(info, ClassInfo) and info.is_module else None


def _builds_weights(info: ClassInfo, symbols: Symbols, depth: int = 0) -> bool:
    """Whether the project class's `__init__` builds a layer with weights or a Parameter."""
    home = symbols.home(info.node)
    for built in _attribute_constructors(info, home).values():
        kind = _kind(built, home)
        if kind in WEIGHTED_MODULES or kind in ("Sequential", "Parameter"):
            return True
        inner = _project_class(built, home)
        if inner is not None and depth < 4 and _builds_weights(inner, home, depth + 1):
            return True
    return False
