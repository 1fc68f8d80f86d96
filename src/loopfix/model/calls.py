"""Calls: which callee a call reaches (torch, a module, a function of the file, a builtin),
and running modules' `forward` and the file's own functions on the caller's environment."""

from __future__ import annotations

import ast
import weakref
import zlib

from loopfix.model import shapes
from loopfix.model.bindings import parameter_names
from loopfix.model.counters import int_constant
from loopfix.model.frames import Call, Frame
from loopfix.model.graphs import (
    EMPTY,
    OPAQUE,
    UNKNOWN_ENTRIES,
    UNSEEN_FORWARD,
    Env,
    Graph,
    Value,
    dict_entry,
    join_envs,
    join_values,
    union,
)
from loopfix.model.handovers import clears_gradients
from loopfix.model.index import child_nodes, walk
from loopfix.model.instances import self_shape
from loopfix.model.shapes import NONE, OTHER, TENSOR, UNKNOWN
from loopfix.model.symbols import (
    MODULE_PLUMBING,
    MODULE_WRAPPERS,
    NOT_CONSTANT,
    ClassInfo,
    FunctionNode,
    Symbols,
    binding_decorator,
    dotted_name,
    literal_value,
    mode_changes_unseen,
    parameter_defaults,
    parameters_of,
    project_callees,
    root_name,
)

MAX_CALL_DEPTH = 4

# fmt: off
# Tensor methods whose result carries no graph.
GRAPH_FREE_METHODS = {
    "detach", "item", "tolist", "numpy", "size", "dim", "numel", "nelement", "stride",
    "data_ptr", "argmax", "argmin", "argsort", "eq", "ne", "lt", "gt", "le", "ge", "nonzero",
    "long", "int", "bool", "byte", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
    "new", "is_contiguous", "element_size", "get_device", "zero_",
    "sample",  # torch.distributions: sample() draws under no_grad (rsample() keeps the graph)
}
# tensor methods (and `torch.` functions) returning a (values, indices) pair: always, or
# when a dimension is given (`x.max()` is one value, `x.max(y)` an elementwise maximum)
PAIR_METHODS = frozenset({"sort", "topk", "kthvalue", "mode", "cummax", "cummin"})
PAIR_WITH_DIM = frozenset({"max", "min", "median", "nanmedian"})
INDEXED_RESULT = ("tuple", (TENSOR, TENSOR))
GRAPH_FREE_ATTRIBUTES = {"data", "grad", "shape", "dtype", "device", "requires_grad", "is_leaf"}
CONTAINER_ADDERS = {"append", "extend", "insert", "appendleft"}
# below every numbered site and `graphs.PLACEHOLDER`: the site of a call handed modules
MODULES_SITE = 10_000_000
# below every other site: the second, third... call of one function from one place with
# the same modules (`values(x, c1)` for two losses), named by the function, its depth and
# the call's rank
REPEATED_CALL_SITE = 1 << 33
# calls that read a list without changing it (a list handed to any other call may be changed)
READ_ONLY_CALLS = frozenset(
    {
        "len",
        "print",
        "sum",
        "min",
        "max",
        "any",
        "all",
        "list",
        "tuple",
        "sorted",
        "reversed",
        "enumerate",
        "zip",
        "iter",
        "isinstance",
        "str",
        "repr",
        "torch.stack",
        "torch.cat",
        "torch.tensor",
        "torch.as_tensor",
        "numpy.array",
    }
)
# library mappings built from a dict (the keyword that passes it): an entry read back by its
# key is what that key was given (tensordict's `TensorDict(source, batch_size)`)
MAPPING_CONSTRUCTORS = {"tensordict.TensorDict": "source"}
# NumPy arrays made from sizes or numbers (`np.zeros(n)`), not from another array's items
NUMPY_ARRAYS = frozenset(
    f"numpy.{name}"
    for name in (
        "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like"
    )
)
# the number of positional arguments before `dtype` (the shape, and the fill value of `full`)
_BEFORE_DTYPE = {"full": 2, "full_like": 2}
# NumPy's numeric and boolean scalar types, as `np.<name>` or a string
NUMERIC_DTYPES = frozenset(
    f"{kind}{bits}" for kind in ("float", "int", "uint", "complex") for bits in (8, 16, 32, 64)
) | {"float", "int", "bool", "bool_", "double", "single", "half", "float128", "longlong"}


def numeric_array(call: ast.Call, qualified: str) -> bool:
    """Whether a `NUMPY_ARRAYS` call makes an array of numbers, whose items store a number
    (NumPy converts a tensor put there): a numeric `dtype`, or none given where the default
    is float (`np.zeros(n)`, `np.full(n, 0.0)`, `np.zeros_like(np.ones(n))`). Not an array
    of `dtype=object` (it stores the tensor itself, graph and all), nor one whose dtype the
    code does not show (`dtype=self.DT`, `np.full(n, None)`, `np.zeros_like(buffer)`)."""
    name = qualified.rpartition(".")[2]
    before = _BEFORE_DTYPE.get(name, 1)
    dtype = next((k.value for k in call.keywords if k.arg == "dtype"), None)
    if dtype is None and len(call.args) > before:
        dtype = call.args[before]
    if any(k.arg is None for k in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args
    ):
        return False  # `**options`: any dtype
    if dtype is not None:
        named = dtype.value if isinstance(dtype, ast.Constant) else dotted_name(dtype)
        return isinstance(named, str) and named.rpartition(".")[2] in NUMERIC_DTYPES
    if name == "array":  # `np.array([0.0] * n)`: from numbers written out
        return bool(call.args) and _numbers(call.args[0])
    if name.startswith("full") and not (len(call.args) > 1 and _numbers(call.args[1])):
        return False  # `np.full(n, None)`: the fill value decides the dtype
    if name.endswith("_like"):
        prototype = call.args[0] if call.args else None
        return (
            isinstance(prototype, ast.Call)
            and isinstance(prototype.func, ast.Attribute)
            and prototype.func.attr in ("zeros", "ones", "empty", "full")
            and numeric_array(prototype, f"numpy.{prototype.func.attr}")
        )
    return True


def _numbers(node: ast.expr) -> bool:
    """A number literal, or a list or tuple of them (nested, or repeated: `[0.0] * n`)."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float, bool)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        sides = (node.left, node.right)
        return any(isinstance(s, ast.List | ast.Tuple) and _numbers(s) for s in sides)
    if not isinstance(node, ast.List | ast.Tuple):
        return False
    return bool(node.elts) and all(_numbers(e) for e in node.elts)


# list methods that move entries: afterwards no position is known to hold what it held
CONTAINER_REORDERERS = {"pop", "remove", "reverse", "sort", "popleft", "rotate"}
# the detach as a value handed to a helper (`map`-like application to a state)
DETACH_FUNCTIONS = {"torch.Tensor.detach", "torch.detach"}
BUILTINS_WITHOUT_GRAPH = {
    "print", "len", "range", "isinstance", "issubclass", "hasattr", "int", "float", "str",
    "bool", "repr", "format", "id", "type", "open", "round", "callable", "getattr", "setattr",
}
TENSOR_CREATION = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "tensor", "as_tensor", "from_numpy", "zeros_like",
    "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
    "manual_seed", "device", "Generator", "no_grad", "inference_mode",
    "Variable",  # `torch.autograd.Variable(x, requires_grad=True)` is a new leaf since 0.4
}
# nn classes without parameters: calling them builds no graph of their own.
PARAMETER_FREE_MODULES = {
    "ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Dropout", "Identity", "Flatten",
    "MaxPool1d", "MaxPool2d", "AvgPool2d", "GELU", "LeakyReLU", "ELU", "SiLU",
}

MODULE_QUERIES = {
    "parameters", "named_parameters", "state_dict", "modules", "children", "buffers",
    "zero_grad", "load_state_dict", "named_modules",
}
# torchmetrics' classification metrics (`Accuracy`, `BinaryF1Score`, `functional.accuracy`):
# counts of thresholded or arg-maxed predictions, whose value never holds a graph (its
# regression metrics, `MeanSquaredError`, do)
CLASSIFICATION_METRICS = {
    "accuracy", "precision", "recall", "f1score", "fbetascore", "specificity", "statscores",
    "auroc", "averageprecision", "confusionmatrix", "jaccardindex", "matthewscorrcoef",
    "cohenkappa", "hammingdistance", "exactmatch", "precisionrecallcurve", "roc",
}
METRIC = ("metric",)  # a metric object whose call gives a value without graph
# fmt: on
STATE_INITIALISER_PREFIXES = ("init", "reset", "zero", "begin", "new_state", "initial")


def _grad_mode_names(*names: str) -> frozenset[str]:
    """The qualified names torch exports each grad-mode switch under
    (`torch.autograd.grad_mode.no_grad is torch.autograd.no_grad is torch.no_grad`)."""
    modules = ("torch", "torch.autograd", "torch.autograd.grad_mode")
    return frozenset(f"{module}.{name}" for module in modules for name in names)


NO_GRAD_CONTEXTS = _grad_mode_names("no_grad", "inference_mode")
SET_GRAD_ENABLED = _grad_mode_names("set_grad_enabled")
# Methods that run `loss.backward()` on their first argument, and the names training code
# gives the objects whose `backward(loss)` does (Accelerate, Fabric, DeepSpeed, Lightning).
FRAMEWORK_BACKWARDS = {"manual_backward"}
FRAMEWORK_OBJECTS = {"accelerator", "fabric", "engine", "model_engine", "deepspeed_engine"}
# methods that hand back the objects they are given, wrapped: Accelerate's `prepare*`, and
# Fabric's `setup*` (a wrapped data loader yields the same batches, moved to the device)
FRAMEWORK_WRAPPERS = {
    *("prepare", "prepare_model", "prepare_optimizer", "prepare_data_loader", "prepare_scheduler"),
    *("setup", "setup_module", "setup_optimizers", "setup_dataloaders"),
}
BACKWARD_FUNCTIONS = {"torch.autograd.backward", "torch.autograd.grad"}
# a process or thread: `start()` runs its `target(*args)`, or a subclass's `run()`
WORKER_CLASSES = frozenset(
    {"multiprocessing.Process", "torch.multiprocessing.Process", "threading.Thread"}
)


def _group_params(group: ast.Dict) -> ast.expr | None:
    """The `params` entry of an optimizer's param group written as a dict literal; None when
    it has none, or a spread (`{**defaults, ...}`) may hold it."""
    if None in group.keys:
        return None
    for key, value in zip(group.keys, group.values, strict=True):
        if isinstance(key, ast.Constant) and key.value == "params":
            return value
    return None


def _started_call(node: ast.Call) -> ast.Call | None:
    """`target(*args)` for `Process(target=target, args=(...))` with literal arguments, made
    once per node (kept on it, so that the call's sites are the same each time it runs)."""
    try:
        return node._loopfix_started
    except AttributeError:
        pass
    given = {k.arg: k.value for k in node.keywords}
    target, arguments = given.get("target"), given.get("args")
    started = None
    if target is not None and (arguments is None or isinstance(arguments, ast.Tuple | ast.List)):
        elements = [] if arguments is None else arguments.elts
        started = ast.copy_location(ast.Call(func=target, args=elements, keywords=[]), node)
        ast.fix_missing_locations(started)
    node._loopfix_started = started
    return started


# how many times one function may be on the call stack (`_recursion_stops`): twice runs a
# function that calls itself on the elements of what it was given
# (`tuple(cut_graph(v) for v in state)`) once more, on an element, where its other branch
# (`return state.detach()`) is taken
RECURSION_DEPTH = 2
MAPPED_ITEM = "__loopfix_item__"  # the name `_mapped_call` passes an item of `map` as


def _mapped_call(node: ast.Call) -> ast.Call:
    """`f(__loopfix_item__)` for `map(f, xs)`, made once per node (kept on it, so that the
    call's sites are the same each time it runs)."""
    try:
        return node._loopfix_mapped
    except AttributeError:
        pass
    item = ast.Name(id=MAPPED_ITEM, ctx=ast.Load())
    mapped = ast.copy_location(ast.Call(func=node.args[0], args=[item], keywords=[]), node)
    ast.fix_missing_locations(mapped)
    node._loopfix_mapped = mapped
    return mapped


class CallsMixin:
    """Calls, for `Interpreter`."""

    def expr_Call(self, node: ast.Call, env: Env) -> Value:
        func = node.func
        qualified = self.symbols.qualify(func)
        if qualified in BACKWARD_FUNCTIONS:  # before `x.backward()`: `torch.autograd.backward`
            return self._functional_backward(node, qualified, env)
        if isinstance(func, ast.Attribute):
            handled = self._method_call(node, func, env)
            if handled is not None:
                return handled
        if qualified in WORKER_CLASSES:
            started = _started_call(node)
            if started is not None:  # `mp.Process(target=train, args=(model, rank))`:
                self.expr_Call(started, env)  # what the worker runs, as a call made here
        if any(self.symbols.qualify(a) in DETACH_FUNCTIONS for a in node.args):
            # `apply_to_tensor(hidden, torch.Tensor.detach)` (ignite's `_detach_hidden`): a
            # helper handed the detach itself applies it to what it returns
            result = self._resolved_call(node, env)
            return Value(frozenset(), result.shape)
        pair = _values_and_indices(node, qualified) and not self._not_a_tensor_method(func, env)
        result = self._resolved_call(node, env)
        if pair and result.shape in (TENSOR, UNKNOWN):
            # `out.sort(dim=1)[1]`, `_, pred = out.max(1)`: the indices are integers, with no
            # graph (`torch.return_types`); only the values carry the input's
            return Value(result.graphs, INDEXED_RESULT, (result.graphs, frozenset()))
        return result

    def _args(self, node: ast.Call, env: Env) -> tuple[list[tuple[Value, str | None]], dict]:
        positional = [(self.eval(a, env), self.key_for(a)) for a in node.args]
        keywords = {k.arg: (self.eval(k.value, env), self.key_for(k.value)) for k in node.keywords}
        for value, key in (*positional, *keywords.values()):
            if value.parts is not None or key in self.slots.by_list:
                self.forget_positions(key, env, node)  # a list handed over: may reorder it
        return positional, keywords

    def _set_mode(self, node: ast.Call, func: ast.Attribute, env: Env) -> None:
        """`model.train()`, `model.train(False)`, `model.eval()`: the mode of the module at
        the receiver's path and of every module below it (`nn.Module.train` sets each
        child's), kept as `<path>.training` for `training_mode`; a mode not written as a
        constant is unknown."""
        key = self.key_for(func.value)
        held = env.get(key) if key is not None else None
        if held is None or not shapes.is_module(held.shape):
            return  # not a network (a trainer's own `train()`)
        mode: bool | None = func.attr == "train"
        if func.attr == "train" and (node.args or node.keywords):
            given = node.args[0] if node.args else node.keywords[0].value
            constant = isinstance(given, ast.Constant) and type(given.value) is bool
            mode = given.value if constant else None
        for below in [k for k in env if k.startswith(key + ".") and k.endswith(".training")]:
            del env[below]
        env[key + ".training"] = EMPTY.with_shape(("mode", mode))

    def training_mode(self, node: ast.expr, env: Env) -> bool | None:
        """`model.training` (`self.training` in a module's method): the mode the nearest
        `train()` / `eval()` call on it, or on a module holding it, set; True for a module
        none was called on (`nn.Module`'s default); None when not known."""
        if not (isinstance(node, ast.Attribute) and node.attr == "training"):
            return None
        key = self.key_for(node.value)
        if key is None:
            return None
        path = key
        while True:
            held = env.get(path + ".training")
            if held is not None:
                mode = held.shape
                mode = mode[1] if isinstance(mode, tuple) and mode[0] == "mode" else None
                if mode is False and mode_changes_unseen(self.instances.symbols):
                    return None  # the module may be put back in training where not seen
                return mode
            if "." not in path:
                break
            path = path.rpartition(".")[0]
        return True if shapes.is_module(self.eval(node.value, env).shape) else None

    def forget_positions(self, key: str | None, env: Env, call: ast.Call | None = None) -> None:
        """The list at `key` is reordered (`t.pop(0)`, `del t[0]`), or may be where the model
        does not look (handed to `random.shuffle(t)` or `helper.push_front(t)`, bound to
        another name): its items stay, their positions are forgotten. A `call` that only
        reads it (`len(t)`, `torch.stack(t)`) keeps them."""
        held = env.get(key) if key is not None else None
        if held is None:
            return
        if call is not None and self.symbols.qualify(call.func) in READ_ONLY_CALLS:
            return
        self.slots.forget(key, env)
        if held.parts is None or not _is_seq(held.shape):
            return
        env[key] = Value(held.graphs, held.shape, None, held.item_parts)

    def _method_call(self, node: ast.Call, func: ast.Attribute, env: Env) -> Value | None:
        attr = func.attr
        if is_text(func.value):  # `"{} = {:.4f}".format(key, loss)`: a str holds no graph
            self._args(node, env)
            return EMPTY.with_shape(OTHER)
        if attr == "get":
            got = self._dict_get(node, func, env)
            if got is not None:
                return got
        if attr in STEP_HOOKS:
            self._hooked(func.value, env)
        if attr in ("train", "eval"):
            self._set_mode(node, func, env)
        if attr in MODULE_PLUMBING and dotted_name(func.value) is None:
            # `nn.Linear(4, 1).to(device)`, `Net().cuda().train()`: the receiver, once
            receiver = self.eval(func.value, env)
            positional, keywords = self._args(node, env)
            if shapes.is_module(receiver.shape) or receiver.shape in (TENSOR, METRIC):
                return receiver
            arguments = [v for v, _ in positional] + [v for v, _ in keywords.values()]
            return Value(receiver.graphs | union(arguments), UNKNOWN)
        if attr in FRAMEWORK_BACKWARDS or attr == "backward" and self._backward_of_argument(node):
            # `accelerator.backward(loss)` (Accelerate), `fabric.backward(loss)` (Fabric),
            # `engine.backward(loss)` (DeepSpeed), `self.manual_backward(loss)` (Lightning):
            # each runs `loss.backward(**kwargs)` on its first argument
            self.eval(func.value, env)
            positional, _ = self._args(node, env)
            if positional:
                self.backward(node, positional[0][0], self._retain(node), env)
            return EMPTY
        if attr in FRAMEWORK_WRAPPERS and self._names_framework(func.value):
            # `model, optimizer = accelerator.prepare(model, optimizer)` (Accelerate),
            # `fabric.setup(model, optimizer)` (Fabric): the same objects, wrapped
            positional, _ = self._args(node, env)
            return _same_objects([v for v, _ in positional])
        if attr == "backward" and not self._has_backward_method(func.value, env):
            loss = self.eval(func.value, env)
            self._args(node, env)
            self.backward(node, loss, self._retain(node), env, self._restricted_to(node, env))
            return EMPTY
        if (
            attr in GRAPH_FREE_METHODS
            and self.symbols.member(func) is None
            and not self._own_method(func, env)
            and not self._holds_module(func, env)
        ):
            # (not `utils.detach(h)`, a function of a project module, nor `gan.sample(n)`, a
            # method of a class of the project, nor `self.ge(x)`, a network kept under a
            # tensor method's name: followed as written)
            base = self.eval(func.value, env)
            self._args(node, env)
            return EMPTY.with_shape(base.shape if attr == "detach" else OTHER)
        if attr == "detach_":
            self.eval(func.value, env)
            self.clear(func.value, env)
            return EMPTY
        if attr in ("step", "zero_grad"):
            return self._update(node, func, env)
        if attr in CONTAINER_ADDERS | {"clear"} and self._own_method(func, env):
            return None  # `collector.clear()` of a class of the project: followed into it
        if attr == "clear" and not node.args and self.key_for(func.value) is not None:
            self.empty(func.value, env)  # `self.rewards.clear()`
            return EMPTY.with_shape(NONE)
        if attr in CONTAINER_REORDERERS:
            self.forget_positions(self.key_for(func.value), env)
            return None
        if attr in CONTAINER_ADDERS:
            key = self.key_for(func.value)
            if key is None:
                return self._add_to_held_list(node, func, env)
            old = self.eval(func.value, env)
            positional, _ = self._args(node, env)
            added = [v for v, _ in positional[-1:]]
            if attr == "append" and added and node.args:
                self.note_accumulation(node.args[-1], added[0], func.value)
            item = added[0].shape if attr != "extend" and added else None
            shape = ("seq", shapes.join(_seq_item(old), item))
            items = None
            if attr in ("append", "insert") and added and added[0].parts is not None:
                # the positions of the tuples appended so far, joined with this one's
                before = Value(old.graphs, None, old.item_parts)
                items = join_values(before, Value(added[0].graphs, None, added[0].parts)).parts
            positions = _added_positions(attr, old, added)
            env[key] = Value(old.graphs | union(added), shape, positions, items)
            self.note_write(key)
            return EMPTY.with_shape(NONE)
        return None

    def _dict_get(self, node: ast.Call, func: ast.Attribute, env: Env) -> Value | None:
        """`losses.get("G_VGG", 0)` of a dict the scope names: the entry, as `losses["G_VGG"]`
        reads it (`dict_entry`), or the default; None for any other call of `get`."""
        key = self.key_for(func.value)
        held = env.get(key) if key is not None else None
        if held is None or not (isinstance(held.shape, tuple) and held.shape[0] == "dict"):
            return None
        if node.keywords or not 1 <= len(node.args) <= 2:
            return None
        if not isinstance(node.args[0], ast.Constant):
            return None
        self.eval(func.value, env)
        default = self.eval(node.args[1], env) if len(node.args) == 2 else EMPTY
        return join_values(dict_entry(held, node.args[0].value), default)

    def _modules_site(self, positional, keywords) -> tuple[int, ...]:
        """Where the body of a function handed modules runs: one site per set of modules
        handed (`values(x, critic1)` and `values(x, critic2)` build apart), named by the
        modules' paths rather than numbered, so that an edit elsewhere in the file (a fix
        that adds a call) leaves it as it was. A call handed no module runs where its caller
        does, as before."""
        named = sorted(
            {key for value, key in (*positional, *keywords.values())
             if key is not None and shapes.is_module(value.shape)}
        )  # fmt: skip
        if not named:
            return ()
        return (*self.frame.site_prefix, -(zlib.crc32("|".join(named).encode()) + MODULES_SITE))

    def _call_site(self, node: ast.Call, function, positional, keywords) -> tuple[int, ...]:
        """Where the body of a call of a function of the project runs (`_modules_site`).
        Another call of the same function at the same site with the same modules (`v1 =
        values(x, c1)` and `v2 = values(x, c1)`, or two helpers that each call it) builds
        its own graphs, as it does when run: the calls are ranked in the order they are
        first evaluated, the first runs where it ran before, and each later one at a site
        of its own, named by the function, the call depth and the rank (not by a position:
        an edit that adds or moves other calls leaves it as it was)."""
        site = self._modules_site(positional, keywords)
        place = (self.scope_number, self.frame.site_prefix, site, id(function))
        for journal in self.rank_journals:
            journal[place, id(node)] = None
        calls = self._calls_from.setdefault(place, [])
        if id(node) not in calls:
            calls.append(id(node))
        rank = calls.index(id(node))
        if not rank:
            return site
        name = f"{self.frame.depth}:{function.name}:{rank}"
        own = -(REPEATED_CALL_SITE + zlib.crc32(name.encode()))
        return (*(site or self.frame.site_prefix), own)

    def _not_a_tensor_method(self, func: ast.expr, env: Env) -> bool:
        """`ranker.topk(x, 2)` of a class of the project, `utils.sort(x)` of a project module,
        `self.mode(obs)` of a network kept under a tensor method's name: not the tensor
        method of that name."""
        return isinstance(func, ast.Attribute) and (
            self.symbols.member(func) is not None
            or self._own_method(func, env)
            or self._holds_module(func, env)
        )

    def _holds_module(self, func: ast.Attribute, env: Env) -> bool:
        """`self.ge(out)`: an attribute that holds a module, called (its name is a tensor
        method's only by chance; `x.ge(y)` of a tensor is a comparison)."""
        key = self.key_for(func)
        held = env.get(key) if key is not None else None
        if held is not None:
            return shapes.is_module(held.shape)
        owner = self.frame.cls
        if isinstance(func.value, ast.Name) and func.value.id == "self" and owner is not None:
            # a method of an object built without a name (`Trainer().fit()`): what its
            # class's `__init__` keeps there
            kept = self.instances.attributes(owner).get(func.attr)
            return kept is not None and shapes.is_module(kept.shape)
        return False

    def _add_to_held_list(self, node: ast.Call, func: ast.Attribute, env: Env) -> Value | None:
        """`history["loss"].append(loss)`: a list held as an item of a container the scope
        names, also nested (`history["train"]["loss"]`); the named container holds what is
        added among its items (and LF006 asks about it as a total). None for any other
        receiver."""
        holder = func.value
        outer = holder  # the item of the named container: `history["train"]`
        while isinstance(outer, ast.Subscript) and isinstance(outer.value, ast.Subscript):
            outer = outer.value
        if not isinstance(outer, ast.Subscript) or self.key_for(outer.value) is None:
            return None
        self.eval(holder, env)
        positional, _ = self._args(node, env)
        added = union(v for v, _ in positional)
        if func.attr == "append" and positional and node.args:
            self.note_accumulation(node.args[-1], positional[-1][0], holder)
        self._bind_item(outer, Value(added, UNKNOWN), env, exact=False)
        return EMPTY.with_shape(NONE)

    def _own_method(self, func: ast.Attribute, env: Env) -> bool:
        """`func` is a method that the receiver's class (of the project) defines."""
        info = self.class_of(self._peek(func.value, env).shape)
        return info is not None and self.symbols.method(info, func.attr) is not None

    def _tensor_params(self, given: ast.expr, env: Env) -> frozenset[str] | None:
        """`Adam([self.log_alpha])`, `[*model.parameters(), self.temperature]`: what an
        optimizer over a list of named tensors steps; each tensor as `shapes.TENSOR_PATH`
        plus its path (no module's call site is one, so its step changes no module's
        weights). None unless every item is a named tensor or a module's parameters, or
        every item is a param group (`_param_groups_params`), also when the groups were
        listed under a name first (`groups = [{...}, {...}]`, then `Adam(groups)`)."""
        named = isinstance(given, ast.Name | ast.Attribute)
        groups = self.param_groups.get(self.key_for(given) or "") if named else None
        if groups is not None:
            return self._param_groups_params(list(groups), env)
        if isinstance(given, ast.Name) and self.leaves:  # `params = [W, U]`, then `SGD(params)`
            listed = self.listed.get(self.key_for(given) or "")
            leaves = [p for p in listed or () if p in self.leaves]
            if listed and len(leaves) == len(listed):
                return frozenset(shapes.TENSOR_PATH + p for p in leaves)
        if isinstance(given, ast.BinOp) and isinstance(given.op, ast.Add):
            # `list(manager.parameters()) + [goal_init]` (LeakGAN's manager and its goal)
            left = self._tensor_params(given.left, env)
            right = self._tensor_params(given.right, env)
            return left | right if left is not None and right is not None else None
        if (
            isinstance(given, ast.Call)
            and isinstance(given.func, ast.Name)
            and given.func.id == "list"
            and len(given.args) == 1
            and not given.keywords
        ):
            given = ast.List(elts=[ast.Starred(value=given.args[0])])  # `list(m.parameters())`
        if not isinstance(given, ast.List | ast.Tuple):
            return None
        if given.elts and all(isinstance(item, ast.Dict) for item in given.elts):
            return self._param_groups_params(given.elts, env)
        paths: set[str] = set()
        for item in given.elts:
            if isinstance(item, ast.Starred):  # `*model.parameters()`
                call = item.value
                method = call.func if isinstance(call, ast.Call) else None
                if not isinstance(method, ast.Attribute) or method.attr != "parameters":
                    return None
                path = self.module_path(method.value)
                if path is None:
                    return None
                paths.add(path)
                continue
            path = self.module_path(item) if isinstance(item, ast.Name | ast.Attribute) else None
            shape = self._peek(item, env).shape
            parameter = shape == shapes.module("Parameter")  # `self.goal_init`, built as one
            if path is None or (
                shape not in (shapes.TENSOR, UNKNOWN, None)
                and not parameter
                and path not in self.leaves
            ):
                return None
            paths.add(shapes.TENSOR_PATH + path)
        return frozenset(paths) or None

    def _param_groups_params(self, groups: list[ast.Dict], env: Env) -> frozenset[str] | None:
        """`Adam([{"params": manager.parameters()}, {"params": [goal_init], "lr": 0.1}])`:
        what every group's `params` holds, as `_tensor_params` names it (groups of modules'
        parameters alone give the list a `params` shape, read before). None unless each
        group's is known."""
        paths: set[str] = set()
        for group in groups:
            given = _group_params(group)
            if given is None:
                return None
            held = shapes.param_paths(self._peek(given, env).shape)
            if held is None:  # `m.parameters()` read as `[*m.parameters()]`
                spread = isinstance(given, ast.Call) and _called_name(given.func) == "parameters"
                listed = ast.List(elts=[ast.Starred(value=given)]) if spread else given
                held = self._tensor_params(listed, env)
            if held is None:
                return None
            paths |= held
        return frozenset(paths) or None

    def _has_backward_method(self, receiver: ast.expr, env: Env) -> bool:
        """An object of a class of the file that defines `backward` (followed as a call)."""
        info = self.class_of(self._peek(receiver, env).shape)
        return info is not None and self.symbols.method(info, "backward") is not None

    def _retain(self, node: ast.Call) -> bool | None:
        """The backward's `retain_graph`; through `**kwargs`, what the caller passed
        (`def backward(self, loss, **kwargs): loss.backward(**kwargs)` called with
        `retain_graph=True` retains)."""
        spread = [k for k in node.keywords if k.arg is None]
        forwarded = (
            len(spread) == 1
            and isinstance(spread[0].value, ast.Name)
            and spread[0].value.id == self.frame.var_keywords
        )
        if not forwarded or len(node.args) >= 2:
            flag = _retain_flag(node)
            keyword = retain_keyword(node)
            if flag is None and keyword is not None and isinstance(keyword.value, ast.Name):
                return self._parameter_flag(keyword.value.id)
            return flag
        passed = self.frame.passed
        given = passed.get("retain_graph") or passed.get("create_graph")
        own = _retain_flag(
            ast.Call(
                func=node.func,
                args=node.args,
                keywords=[k for k in node.keywords if k.arg is not None],
            )
        )
        if given is None:
            return own
        if isinstance(given, ast.Constant):
            return bool(given.value) or bool(own)
        return None

    def _parameter_flag(self, name: str) -> bool | None:
        """`loss.backward(retain_graph=keep)` in `def backprop(loss, keep=False)` being
        followed from a call: the literal the call gives `keep` by keyword, else its default
        when the call does not pass it; None when it passes it otherwise (by position, or
        maybe through `*args` / `**kwargs`), or `keep` is not a parameter (or the function
        runs as its own scope: any caller may pass it)."""
        followed = getattr(self, "followed", None)
        if not followed or self.key_for(ast.Name(name)) != self.frame.prefix + name:
            return None
        function, node, call = followed[-1]
        if name in call.passed:
            given = call.passed[name]
            return bool(given.value) if isinstance(given, ast.Constant) else None
        spread = node is None or any(isinstance(a, ast.Starred) for a in node.args)
        if spread or any(k.arg is None for k in node.keywords):
            return None
        positional = [a.arg for a in function.args.posonlyargs + function.args.args]
        if call.cls is not None:
            positional = positional[1:]  # `self`
        if name in positional and positional.index(name) < len(call.positional):
            return None
        default = dict((a.arg, d) for a, d in parameter_defaults(function.args)).get(name)
        return bool(default.value) if isinstance(default, ast.Constant) else None

    def _hooked(self, receiver: ast.expr, env: Env) -> None:
        """`optimizer.register_step_post_hook(clear)`: what the optimizer's steps do to the
        gradients is the hook's (a hook may clear them, or skip the step), so it is no
        longer an optimizer the model follows; for a helper's parameter (`heavy_ball(opt)`
        registering one), neither is the caller's optimizer it was given."""
        for key in self._changed_in_place(self.key_for(receiver)):
            value = env.get(key)
            if (
                value is not None
                and isinstance(value.shape, tuple)
                and value.shape[:1] == ("optimizer",)
            ):
                env[key] = value.with_shape(UNKNOWN)
                self.note_write(key)

    def _restricted_to(self, node: ast.Call, env: Env):
        """For `loss.backward(inputs=list(probe.fc.parameters()))` (or `inputs=X.parameters()`):
        a test of the loss's graphs that the backward does not free. Autograd runs only the
        nodes on a path to the inputs; a graph a module call built whose modules are all known
        and none of them holds (or lies within) an input module keeps what it saved. None
        without such an `inputs=`."""
        keyword = _keyword(node, "inputs")
        owner = parameters_of(keyword.value) if keyword is not None else None
        if owner is None:
            return None
        path = self.module_path(owner)
        if path is None:
            return None
        sites = self.obs.site_modules

        def untouched(graph) -> bool:
            modules = sites.get(graph.site)
            if graph.opaque or not modules or None in modules:
                return False
            return not any(shapes.within(m, path) or shapes.within(path, m) for m in modules)

        return untouched

    def _backward_of_argument(self, node: ast.Call) -> bool:
        """`x.backward(loss)` where x is a training framework's object rather than a tensor
        (whose `backward` takes the output gradient), told apart by the names training code
        gives such objects."""
        if not node.args or isinstance(node.args[0], ast.Starred):
            return False
        return self._names_framework(node.func.value)

    @staticmethod
    def _names_framework(receiver: ast.expr) -> bool:
        name = dotted_name(receiver) or ""
        return name.rpartition(".")[2].lower() in FRAMEWORK_OBJECTS

    def _functional_backward(self, node: ast.Call, qualified: str, env: Env) -> Value:
        positional, keywords = self._args(node, env)
        first = positional[0][0] if positional else None
        first = first or keywords.get("tensors", keywords.get("outputs", (EMPTY, None)))[0]
        creates = _keyword_true(node, "create_graph")
        retain = self._retain(node)
        reached = first
        if qualified.endswith("grad"):
            # `grad(d(interp).sum(), interp)` runs the graph from its outputs back to its
            # inputs only: what built the inputs is neither gone through nor freed
            given = positional[1][0] if len(positional) > 1 else keywords.get("inputs")
            inputs = given[0] if isinstance(given, tuple) else given
            if inputs is not None and first is not None:
                reached = Value(first.graphs - inputs.graphs, first.shape)
        self.backward(node, reached, retain, env)
        if qualified.endswith("grad") and creates:
            return first
        return EMPTY

    def _resolved_call(self, node: ast.Call, env: Env) -> Value:
        func = node.func
        callee = self._resolve(func, env, node)
        kind = callee[0]
        if kind == "method_of" and isinstance(func, ast.Attribute):
            receiver = self.eval(func.value, env)
        else:
            receiver = EMPTY
        positional, keywords = self._args(node, env)
        arguments = [v for v, _ in positional] + [v for v, _ in keywords.values()]
        unseen = kind in ("unknown", "method_of") or callee[1:2] == (shapes.module("custom"),)
        if unseen and self._hands_back(node, positional):
            # `model, optimizer = amp.initialize(model, optimizer)` (apex): the same objects
            # (not a recurrent module's step, though its result feeds the names it is given)
            return _same_objects([v for v, _ in positional])
        if kind == "module":
            return self._module_call(node, callee[1:], positional, keywords, env)
        passed = {k.arg: k.value for k in node.keywords if k.arg is not None}
        if kind == "function":
            site = self._call_site(node, callee[1], positional, keywords)
            literals = self._literal_arguments(callee[1], node, method=False)
            call = Call(callee[1], positional, keywords, None, None, site, passed, literals)
            return self._call_function(call, env)
        if kind == "method":
            _, info, method, receiver_key = callee
            if receiver_key is None and self._constructed(func.value, env) is not None:
                self.eval(func.value, env)  # `Trainer(model, opt).warmup(x)`: built first
            site = self._call_site(node, method, positional, keywords)
            literals = self._literal_arguments(method, node, method=True)
            return self._call_function(
                Call(method, positional, keywords, receiver_key, info, site, passed, literals),
                env,
            )
        if kind == "constructed":
            return EMPTY.with_shape(callee[1])
        if kind == "record":
            return _record(callee[1], node, positional, keywords)
        if kind == "construct":  # a class of the file: its __init__ learns what it is given
            info = callee[1]
            self._adopt_built_class(info)
            init = self.symbols.method(info, "__init__")
            if init is not None:
                bound = _bound(init, positional, keywords, method=True)
                renames = self._held_renames(bound)
                self.call_sites.record(init, bound, None, self._modules_of, renames=renames)
                self._note_object_classes(bound)
                function, entry = self.followed[-1][:2] if self.followed else (None, None)
                in_loop = bool(self.loop_stack)
                self.held.note(info, init, bound, self.frame.prefix, function, entry, in_loop)
            return EMPTY.with_shape(self_shape(info))
        if kind == "wrapper":
            wrapped = positional[0][0] if positional else next(iter(keywords.values()))[0]
            return wrapped
        if kind == "optimizer":
            first = positional[0][0] if positional else keywords.get("params", (EMPTY, None))[0]
            paths = shapes.param_paths(first.shape)
            keyword = _keyword(node, "params")
            given = node.args[0] if node.args else keyword.value if keyword else None
            if paths is None and given is not None:  # `Adam(params=[{"params": ...}, ...])`
                paths = self._tensor_params(given, env)
            return EMPTY.with_shape(("optimizer", paths))
        if kind == "scheduler":  # `StepLR(opt, ...)`, `MultiStepLR(optimizer=opt, ...)`
            given = node.args[0] if node.args else _keyword(node, "optimizer")
            given = given.value if isinstance(given, ast.keyword) else given
            optimizer = self.module_path(given) if given is not None else None
            # built in a helper given the optimizer (`get_scheduler(opt, hp)`): the caller's
            optimizer = self.outer_key(optimizer) if optimizer is not None else None
            return EMPTY.with_shape(("scheduler", optimizer))
        if kind == "chain":
            paths = [shapes.param_paths(v.shape) for v in arguments]
            known = None not in paths and paths
            return EMPTY.with_shape(("params", frozenset().union(*paths)) if known else UNKNOWN)
        if kind == "graph_free":
            return EMPTY.with_shape(callee[1])
        if kind == "receiver":
            return self.eval(func.value, env) if isinstance(func, ast.Attribute) else EMPTY
        if kind == "builtin" and isinstance(func, ast.Name) and func.id == "map" and node.args:
            return self._mapped(node, positional, env)
        if kind == "builtin" and _trainable_filter(node) and len(arguments) == 2:
            return arguments[1]  # the parameters the optimizer over it steps
        if kind == "builtin":
            return _builtin_result(func.id, arguments) if isinstance(func, ast.Name) else EMPTY
        if kind in ("unknown", "method_of") and positional:
            paths = shapes.param_paths(positional[0][0].shape)
            if paths is not None:  # `optimizer_class(self.qf1.parameters(), lr=lr)`
                return EMPTY.with_shape(("optimizer", paths))
        if kind in ("unknown", "method_of") and "accuracy" in _called_name(func).lower():
            # `accuracy_fn(y_true=y, y_pred=logits)` of a module loopfix cannot see: the share
            # of predictions that match, which no graph reaches
            return EMPTY.with_shape(UNKNOWN)
        if kind == "unknown" and (mapping := self._mapping_given(func, positional, keywords)):
            return mapping
        shape = TENSOR if kind == "torch" else UNKNOWN
        graphs = union(arguments) | receiver.graphs
        if self.leaves and _saving_call(func, self.symbols):  # `torch.mm(x, W)`, `x.mm(W)`
            operands = [func.value] if isinstance(func, ast.Attribute) else []
            graphs |= self.leaf_graphs(operands + list(node.args))
        if kind == "unknown":
            graphs |= OPAQUE.graphs  # a function loopfix cannot see may return any graph
        return Value(graphs, shape)

    def _mapping_given(self, func: ast.expr, positional, keywords) -> Value | None:
        """A library mapping built from a dict literal (`TensorDict(source={"loss_actor": a,
        "loss_value": b}, batch_size=[])`, as torchrl's losses return theirs): that dict, its
        entries apart, as a dict literal is. None for any other call."""
        keyword = MAPPING_CONSTRUCTORS.get(self.symbols.qualify(func) or "")
        if keyword is None:
            return None
        given = positional[0][0] if positional else keywords.get(keyword, (None, None))[0]
        shape = given.shape if given is not None else None
        return given if isinstance(shape, tuple) and shape[0] == "dict" else None

    def _hands_back(self, node: ast.Call, positional) -> bool:
        """A call loopfix cannot see, given only modules and optimizers (or lists of them),
        whose results are bound back position by position to the names they were passed as
        (`model, optimizer = amp.initialize(model, optimizer, opt_level="O1")`,
        `[G, D], [opt_g, opt_d] = amp.initialize([G, D], [opt_g, opt_d])`): a wrapper that
        returns the objects it was given."""
        statement = self.top_statement
        if not (
            self.frame.is_top
            and isinstance(statement, ast.Assign)
            and statement.value is node
            and len(statement.targets) == 1
            and node.args
            and not any(isinstance(a, ast.Starred) for a in node.args)
        ):
            return False
        if not all(_is_trainer_objects(value.shape) for value, _ in positional):
            return False
        target = statement.targets[0]
        if len(node.args) == 1:
            return _same_names(target, node.args[0])
        return isinstance(target, ast.Tuple | ast.List) and _same_names(
            target, ast.Tuple(elts=node.args)
        )

    def _resolve(self, func: ast.expr, env: Env, call: ast.Call) -> tuple:
        if isinstance(func, ast.Name):
            return self._resolve_name(func, env, call)
        through_class = self.symbols.class_level_method(func) or self._through_cls(func)
        if through_class is not None:  # `Stacked.repackage(hs)`, `helpers.Ops.cut(h)`
            info, method, kind = through_class
            if kind == "static":
                return ("function", method)
            return ("method", info, method, self.key_for(func.value))  # `cls` is the class
        inherited = self._super_method(func)
        if inherited is not None:  # `super().__init__(model, optimizer)`
            return inherited
        member = self.symbols.member(func)
        if isinstance(member, ClassInfo):
            return self._construction(member)
        if member is not None:
            return ("function", member)
        instance = self._imported_instance(func)
        if instance is not None:  # `helpers.detacher(h)`, built in helpers.py
            return instance
        qualified = self.symbols.qualify(func)
        if qualified is not None and qualified.split(".")[0] == "torch":
            return self._resolve_torch(call, qualified)
        metric = _classification_metric(qualified)
        if metric is not None:
            return metric
        if qualified == "itertools.chain":
            return ("chain",)
        if qualified in NUMPY_ARRAYS | {"numpy.array"} and numeric_array(call, qualified):
            return ("graph_free", shapes.NUMPY_ARRAY)  # an item stored into it is a number
        if not isinstance(func, ast.Attribute):
            return ("unknown",)
        key = self.key_for(func)
        if key is not None and key in env and shapes.is_module(env[key].shape):
            return ("module", env[key].shape, key)
        called = self._called_object(env.get(key) if key is not None else None, key)
        if called is not None:
            return called
        receiver = self._peek(func.value, env)
        unknown = receiver.shape in (None, UNKNOWN)
        info = self.class_of(receiver.shape) or self._constructed(func.value, env)
        if info is not None:
            method = self.symbols.method(info, func.attr)
            if method is not None:
                return ("method", info, method, self.key_for(func.value))
            attribute = self.instances.attributes(info).get(func.attr)
            if attribute is not None and shapes.is_module(attribute.shape):
                return ("module", attribute.shape, key)
            called = self._called_object(attribute, key)
            if called is not None:  # `self.loss_f(...)`: an object with `__call__`
                return called
            if attribute is not None:
                # set by the constructor to what is not a module of the project (a module
                # made by `partial(nn.Linear, bias=False)`, a lambda): a callable of its own,
                # never a method of the receiver (whose forward would run again)
                return ("module", shapes.module("custom"), key, UNSEEN)
            unknown = True  # `self.model` set from a parameter nothing passes
        if shapes.is_module(receiver.shape):
            return self._module_method(func, receiver.shape)
        if unknown and func.attr in self.symbols.module_evidence:
            return ("module", shapes.module("custom"), key, UNSEEN)  # `self.model(x)`
        if (
            unknown
            and func.attr == "parameters"
            and not (call.args or call.keywords)
            and isinstance(func.value, ast.Attribute)
        ):
            # `self.critic.parameters()` of a network a factory from elsewhere built: only a
            # module has parameters(), and the optimizer built on them owns that attribute
            # (a plain name may be one element of a container: not taken for a path)
            path = self.module_path(func.value)
            if path is not None:
                return ("graph_free", ("params", frozenset({path})))
        if func.attr in {"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"}:
            return ("graph_free", TENSOR)
        return ("method_of",)

    def _constructed(self, node: ast.expr, env: Env) -> ClassInfo | None:
        """The class of the project that `node` builds in place (`Trainer(model, opt)` in
        `Trainer(model, opt).warmup(loader)`): its methods run on the new object."""
        if not isinstance(node, ast.Call):
            return None
        callee = self._resolve(node.func, env, node)
        return callee[1] if callee[0] == "construct" else None

    def _super_method(self, func: ast.expr) -> tuple | None:
        """`super().name(...)` (or `super(Cls, self).name`) in a method: the first base of
        the method's class, in the project, that defines `name`, run on the same object."""
        if not (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name)
            and func.value.func.id == "super"
            and self.frame.cls is not None
        ):
            return None
        cls = self.frame.cls
        home = self.symbols.home(cls.node)
        for base in home.file_bases(cls):
            method = home.method(base, func.attr)
            if method is not None:
                return ("method", base, method, self.frame.self_path)
        return None

    def _modules_of(self, value: Value) -> frozenset[str | None]:
        """The module paths whose calls built `value`'s graphs (None: a call whose module
        is not known by a path)."""
        paths: set[str | None] = set()
        for graph in value.graphs:
            paths |= self.obs.site_modules.get(graph.site, {None})
        return frozenset(paths)

    def _called_object(self, value: Value | None, key: str | None) -> tuple | None:
        """A call of an object (not a module) whose project class defines `__call__`: that
        method, run on the object (a loss object that steps the optimizer it is given)."""
        if value is not None and value.shape == METRIC:
            return ("graph_free", TENSOR)  # `train_acc(preds, y)` of a torchmetrics metric
        if value is None or not isinstance(value.shape, tuple) or value.shape[0] != "object":
            return None
        info = self.class_of(value.shape)
        method = self.symbols.method(info, "__call__") if info is not None else None
        if method is None:
            return None
        return ("method", info, method, key)

    def _resolve_name(self, func: ast.Name, env: Env, call: ast.Call) -> tuple:
        method = self.frame.method_aliases.get(func.id)
        if method is not None:  # `act = agent.act`, then `act(state)`
            return self._resolve(method, env, call)
        key = self.key_for(func)
        value = env.get(key) if key else None
        nested = self.frame.nested.get(func.id)
        if nested is not None and value is None:  # `zero_grad_all()` defined in `train()`
            self.closures.add(id(nested))
            return ("function", nested)
        if value is not None and shapes.is_module(value.shape):
            return ("module", value.shape, key)
        unknown = value is None or value.shape in (None, UNKNOWN)
        called = self._called_object(value, key)
        if called is not None:  # `criterion(outputs, model, optimizer)` of a project class
            return called
        if value is not None and key == func.id and func.id in self.symbols.functions:
            # a module-level lambda or alias of a function (`repackage = detach_state`,
            # `Symbols.functions` holds it only when the module binds it once)
            value = None
        if func.id in self.symbols.namedtuples and (value is None or key == func.id):
            return ("record", self.symbols.namedtuples[func.id])  # the module's own name
        if value is None:
            if func.id in self.symbols.functions:
                return ("function", self.symbols.functions[func.id])
            instance = self._imported_instance(func)
            if instance is not None:  # `from helpers import detacher`, then `detacher(h)`
                return instance
            if func.id in self.symbols.classes:
                return self._construction(self.symbols.classes[func.id])
            static = self.expr_Name(func, env).shape
            if shapes.is_module(static):
                return ("module", static, key)
        qualified = self.symbols.qualify(func)
        if qualified and qualified.split(".")[0] == "torch":
            return self._resolve_torch(call, qualified)
        metric = _classification_metric(qualified)
        if metric is not None:
            return metric
        if qualified == "itertools.chain":
            return ("chain",)
        if func.id in BUILTINS_WITHOUT_GRAPH or func.id in _BUILTIN_SHAPERS:
            return ("builtin",)
        if value is None and _trainable_filter(call):
            return ("builtin",)
        if unknown and func.id in self.symbols.module_evidence:
            return ("module", shapes.module("custom"), key, UNSEEN)
        return ("unknown",)

    def _adopt_built_class(self, info: ClassInfo) -> None:
        """A class of another project module built inside a function of a third one that
        the analysed module calls (`model = CreateModel(opt)` in `train.py`, the factory in
        `model_loader.py` building `DRGAN` of `drgan.py`): the object comes back to the
        analysed module, whose code calls its methods, though it never imports the class
        (`Symbols.adopt`, as for an object its callers pass it)."""
        analysed = self.instances.symbols
        if self.symbols is not analysed and analysed.class_named(info.node.name) is None:
            analysed.adopt(info, self.symbols)

    def _construction(self, info: ClassInfo) -> tuple:
        """A project class built: an optimizer when it derives from one of `torch.optim`'s
        (`class SharedAdam(torch.optim.Adam)`, A3C's optimizer over the shared model; a
        custom `Optimizer`), whose first argument is the parameters it steps; else its
        `__init__` runs."""
        if self._derives_from(info, _optimizer_class):
            if _clears_own_gradients(info, self.symbols.home(info.node)):
                # its own step (or another method) clears the gradients: not an optimizer
                # whose clearing the model can follow
                return ("constructed", UNKNOWN)
            return ("optimizer",)
        if (
            self._derives_from(info, _scheduler_class)
            and not self._binds_step(info, 0)
            and self.symbols.home(info.node).stores_attribute("step") == 0
            and self.symbols.stores_attribute("step") == 0
        ):
            # `class FindLR(_LRScheduler)` with its own `get_lr()`: the base's `step()` moves
            # the schedule, which starts from the optimizer's learning rate (a module that
            # sets a `step` attribute, `Frozen.step = ...`, may replace it)
            return ("scheduler",)
        return ("construct", info)

    def _binds_step(self, info: ClassInfo, depth: int) -> bool:
        """Whether the class or a project class it derives from defines or assigns its own
        `step` (`def step(...)`, `step = _advance`)."""
        for statement in info.node.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                if statement.name == "step":
                    return True
            elif isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = getattr(statement, "targets", None) or [statement.target]
                if any(isinstance(t, ast.Name) and t.id == "step" for t in targets):
                    return True
        if depth >= 3:
            return False
        home = self.symbols.home(info.node)
        return any(self._binds_step(b, depth + 1) for b in home.file_bases(info))

    def _derives_from(self, info: ClassInfo, base_test, depth: int = 0) -> bool:
        """Whether the class, or a project class it derives from (three deep), names a base
        whose qualified name `base_test` accepts (`torch.optim.Adam`)."""
        home = self.symbols.home(info.node)
        if any(base_test(home.qualify(base) or "") for base in info.node.bases):
            return True
        if depth >= 3:
            return False
        return any(self._derives_from(b, base_test, depth + 1) for b in home.file_bases(info))

    def _resolve_torch(self, call: ast.Call, qualified: str) -> tuple:
        name = qualified.rsplit(".", 1)[-1]
        if name in MODULE_WRAPPERS and (call.args or call.keywords):
            return ("wrapper",)
        if qualified.startswith("torch.nn.") and name[:1].isupper():
            return ("constructed", self.symbols.static_shape(call) or shapes.module(name))
        if name in TENSOR_CREATION:
            return ("graph_free", TENSOR)
        if name.endswith("GradScaler"):
            return ("graph_free", ("scaler",))
        if qualified.startswith("torch.optim.") and name[:1].isupper():
            return ("scheduler",) if ".lr_scheduler." in qualified else ("optimizer",)
        if qualified.startswith("torch.optim") or qualified.startswith("torch.utils"):
            return ("graph_free", OTHER)
        return ("torch",)

    def _module_method(self, func: ast.Attribute, receiver_shape) -> tuple:
        attr = func.attr
        if attr in MODULE_PLUMBING:
            return ("receiver",)
        if attr == "parameters":
            path = self.module_path(func.value)
            return ("graph_free", ("params", frozenset({path})) if path else OTHER)
        if attr in MODULE_QUERIES:
            return ("graph_free", OTHER)
        if attr.lower().startswith(STATE_INITIALISER_PREFIXES):
            return ("graph_free", UNKNOWN)
        return ("module", receiver_shape, self.key_for(func.value))

    def _peek(self, node: ast.expr, env: Env) -> Value:
        """The value of a receiver expression without re-running calls inside it."""
        key = self.key_for(node)
        if key is not None:
            return self.eval(node, env)
        if isinstance(node, ast.Subscript):
            base = self._peek(node.value, env)
            return base.with_shape(shapes.item_shape(base.shape))
        return EMPTY

    def _module_call(self, node: ast.Call, callee: tuple, positional, keywords, env) -> Value:
        shape, receiver_key, *unseen = callee  # UNSEEN: known a module only by its use
        kind = shape[1]
        graphs = given = union([v for v, _ in positional] + [v for v, _ in keywords.values()])
        if kind.endswith("Loss") or kind in PARAMETER_FREE_MODULES:
            return Value(graphs, TENSOR)
        site = (*self.frame.site_prefix, self._id("site", node))
        if unseen:  # no class at all: its output's items are told apart (`item_graph`)
            site = (*site, UNSEEN_FORWARD)
        func = node.func
        path = self.module_path(func.value if _calls_forward(func) else func) or receiver_key
        paths = {path}
        if (origin := self._kept_module(func)) is not None:
            paths.add(origin)  # the same module, as the scope's optimizers name it
        self.obs.site_modules.setdefault(site, set()).update(paths)
        if self.top_statement is not None:
            self.obs.statement_modules.setdefault(id(self.top_statement), set()).update(paths)
        info = self.module_class(shape)
        if info is not None and self._returns_own_parameter(info):
            # the result is the module's own parameter, a leaf: what reaches it reaches the
            # module's weights, but the call keeps nothing a step of them could change
            self.obs.leaf_sites.add(site)
            return Value(graphs | {Graph(site)}, TENSOR)
        frozen_class = (
            info is not None and info.node.name in self.symbols.home(info.node).frozen_classes
        )
        forward = info.methods.get("forward") if info is not None else None
        # the call's own graph stands for what the module holds; a forward that reads
        # nothing of `self` but settings its constructor was given as plain values holds
        # nothing
        settings = self.symbols.home(info.node).stateless_forward(info) if info else None
        owns = forward is None or settings is None or self._holds_weights(info, settings)
        if owns and not (self.frozen_forwards or frozen_class or self._frozen(path)):
            graphs |= {Graph(site)}
        if forward is None:
            default = UNKNOWN if kind == "custom" else TENSOR
            return Value(graphs, shapes.RECURRENT_OUTPUT.get(kind, default))
        # an element of a container of modules (`m` in `[m(x) for m in models]`) runs its
        # forward as `models[*]`, so that its submodules' graphs are that element's too
        receiver = path if path is not None and "[*]" in path else receiver_key
        literals = self._literal_arguments(forward, node, method=True)
        call = Call(forward, positional, keywords, receiver, info, site, literals=literals)
        if forward in self.call_stack:
            # a module whose forward calls the module again (or an unknown method of it, taken
            # for its forward): the body runs once; here it stands for "no graph", the least
            # fixpoint, beside the arguments and the module's own
            return Value(graphs)
        ran = self.frame.depth < MAX_CALL_DEPTH
        self.frozen_forwards += frozen_class  # its submodules are frozen with it
        try:
            result = self._call_function(call, env)
        finally:
            self.frozen_forwards -= frozen_class
        # the forward was followed: what it returns holds the graphs it was built from (a
        # state passed through or made fresh holds none of the module's own; an argument
        # the body detached, none of the argument's), and the module's own; unless its body
        # did not run (a recursive call, the depth cap), where the arguments' count too
        if not ran:
            return Value(graphs | result.graphs, result.shape, result.parts)
        return Value((graphs - given) | result.graphs, result.shape, result.parts)

    def _returns_own_parameter(self, info) -> bool:
        """`Symbols.returns_own_parameter`, unless the module of the class or the one being
        run registers a forward hook or a parametrization (`register_parametrization(image,
        "weight", ...)`), which makes the call compute on the parameter."""
        home = self.symbols.home(info.node)
        if not home.returns_own_parameter(info):
            return False
        return not any(s.whole_module().registers_hooks for s in (home, self.instances.symbols))

    def _kept_module(self, func: ast.expr) -> str | None:
        """The key of the module a method reaches as `self.<attribute>`, as the frame that
        built the object named it (`HeldModules.module_of`)."""
        target = func.value if _calls_forward(func) else func
        cls = self.frame.cls
        if not (
            cls is not None
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            return None
        return self.held.module_of(cls, target.attr, self.instances.symbols, self._modules_seen())

    def _note_object_classes(self, bound: dict[str, tuple[Value, str | None]]) -> None:
        """The classes of the objects and modules a call passes (`Trainer(agent, ...)`,
        `Trainer(TinyLM(), ...)`), for a callee's module that does not import them
        (`Symbols.adopt`)."""
        for value, _ in bound.values():
            shape = value.shape
            info = self.class_of(shape) if shapes.class_name(shape) else None
            if info is not None and shape[0] in ("object", "module"):
                self.call_sites.note_class(info, self.home_of(info.node))

    def _held_renames(self, bound: dict[str, tuple[Value, str | None]]) -> dict[str, str]:
        """The caller's modules as the callee knows them through the objects it is given
        (`HeldModules.renames`)."""
        if not self.held.given:
            return {}
        return self.held.renames(bound, self.class_of, self.instances.symbols, self._modules_seen())

    def _holds_weights(self, info, settings: frozenset[str]) -> bool:
        """Whether one of the `settings` of the module's instances holds a tensor, a
        parameter or a module (`Margin(margin=nn.Parameter(...))`): what its constructor
        calls were given, as `Instances` built them."""
        if not settings:
            return False
        attributes = self.instances.attributes(info)
        for name in settings:
            shape = attributes[name].shape if name in attributes else None
            if shape == TENSOR or shapes.is_module(shape) or shapes.param_paths(shape):
                return True
        return False

    def _mapped(self, node: ast.Call, positional, env: Env) -> Value:
        """`map(f, xs)`: what `f` makes of an item: `torch.Tensor.detach` and a lambda whose
        body detaches (`map(lambda t: t.detach(), hidden)`) leave no graph."""
        function, iterables = node.args[0], positional[1:]
        items = union(v for v, _ in iterables)
        if isinstance(function, ast.Attribute) and function.attr in ("detach", "detach_"):
            return EMPTY.with_shape(("seq", TENSOR))
        if isinstance(function, ast.Lambda) and len(function.args.args) == len(iterables):
            inner = dict(env)
            for argument, (value, _) in zip(function.args.args, iterables, strict=True):
                item = value.with_shape(shapes.item_shape(value.shape))
                inner[self.frame.prefix + argument.arg] = item
            result = self.eval(function.body, inner)
            return Value(result.graphs, ("seq", result.shape))
        mapped = _mapped_call(node) if len(iterables) == 1 else None
        if mapped is not None and project_callees(function, self.symbols):
            # `tuple(map(repackage, hidden))`: the project function called on an item
            value = iterables[0][0]
            inner = dict(env)
            inner[self.key_for(mapped.args[0])] = value.with_shape(shapes.item_shape(value.shape))
            result = self.eval(mapped, inner)
            return Value(result.graphs, ("seq", result.shape))
        return Value(union(v for v, _ in positional) | items, ("seq", UNKNOWN))

    def _through_cls(self, func: ast.expr) -> tuple | None:
        """`cls.repackage(item)` inside a classmethod: a `staticmethod` or `classmethod` of
        the class the running one was called on (its first parameter names that class)."""
        if not (self.call_stack and self.frame.cls is not None):
            return None
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        running = self.call_stack[-1]
        first = (running.args.posonlyargs + running.args.args)[:1]
        if not first or first[0].arg != func.value.id or binding_decorator(running) != "class":
            return None
        method = self.symbols.method(self.frame.cls, func.attr)
        kind = binding_decorator(method) if method is not None else None
        return (self.frame.cls, method, kind) if kind is not None else None

    def _imported_instance(self, func: ast.expr) -> tuple | None:
        """A call of an object another project module built at module level, whose class
        defines `__call__` (`detacher = Detacher()` in helpers.py): that method, run on it."""
        info = self.symbols.instance_class(func)
        method = self.symbols.method(info, "__call__") if info is not None else None
        return ("method", info, method, self.key_for(func)) if method is not None else None

    def _frozen(self, path: str | None) -> bool:
        """Every parameter of the module at `path` is frozen for good: no graph of its own."""
        frozen = self.symbols.frozen
        if not frozen or path is None:
            return False
        bare = path.removeprefix("self.")
        return any(
            shapes.within(path, f) or shapes.within(bare, f.removeprefix("self.")) for f in frozen
        )

    def _call_function(self, call: Call, env: Env) -> Value:
        """Run a function defined in this file on the caller's environment.

        The callee's locals live in the same environment under a prefix and are dropped on
        return; `self.x` and attributes of arguments that are caller paths write through.
        """
        function = call.function
        if self._recursion_stops(function):
            return EMPTY  # recursion: start from "no graph", the least fixpoint
        if self.frame.depth >= MAX_CALL_DEPTH:
            return Value(union(call.argument_values()), UNKNOWN)
        summarised = self.summaries.call(self, call, env)
        if summarised is not None:  # its summary for this context: the body does not run
            return summarised
        if self.skipped_as_inert(function):
            return EMPTY.with_shape(UNKNOWN)
        returned, after, frame = self._run_body(call, env)
        env.clear()
        env.update({k: v for k, v in after.items() if not k.startswith(frame.prefix)})
        held = _returned_attributes(function, after, frame.prefix)
        self.returned_attributes = (function, *held) if held is not None else None
        return returned

    def hand_back_attributes(self, node: ast.Assign, env: Env) -> None:
        """`model = create_model(opt)` of a factory of the file that builds an object, sets
        its attributes (`model = DRGAN(); model.initialize(); return model`) and returns it:
        the caller's name holds those attributes, as if the caller had made the calls
        itself (the callee's locals are dropped on return)."""
        returned, self.returned_attributes = self.returned_attributes, None
        target, value = node.targets[0], node.value
        if returned is None or len(node.targets) != 1 or not isinstance(value, ast.Call):
            return
        function, local, held = returned
        called = value.func.attr if isinstance(value.func, ast.Attribute) else None
        if (called or getattr(value.func, "id", None)) != function.name:
            return  # the factory's call is inside another (`wrap(create_model(opt))`)
        key = self.key_for(target) if isinstance(target, ast.Name | ast.Attribute) else None
        if key is None:
            return
        renames = {local: key}  # the factory's paths, in the caller's terms
        for suffix, value in held.items():
            env[f"{key}.{suffix}"] = value.with_shape(shapes.rename_paths(value.shape, renames))
            self.note_write(f"{key}.{suffix}")

    def runs_with_grad(self, function: FunctionNode) -> bool:
        """Whether a call of `function` here is known to run with grad enabled: not under
        `torch.no_grad()` (or a mode set off) nor a context that may switch grad off
        (`grad_mode_unknown`), and the function not decorated with one."""
        if self.no_grad or self.grad_mode_unknown:
            return False
        return not _decorated_no_grad(function, self.home_of(function))

    def skipped_as_inert(self, function: FunctionNode) -> bool:
        """Whether a call of `function` here is not followed: it runs without grad, builds
        no graph and stores nothing the caller sees (an evaluation pass, metrics,
        plotting), so nothing of it reaches a rule (`inert`)."""
        home = self.home_of(function)
        return (self.no_grad or _decorated_no_grad(function, home)) and inert(function, home)

    def _recursion_stops(self, function: FunctionNode) -> bool:
        stack = self.call_stack
        if function not in stack:
            return False
        # only a function calling itself directly runs once more (on an element of what it
        # was given): a cycle through other functions would run each of them again, and
        # the calls below them again in turn
        return stack[-1] is not function or stack.count(function) >= RECURSION_DEPTH

    def _run_body(
        self, call: Call, env: Env, placeholders: dict[str, Value] | None = None
    ) -> tuple[Value, Env, Frame]:
        """Run the callee's body on `env` (its parameters bound to the arguments, or to
        `placeholders` when a summary is being computed): what it returns, the environment
        after it (its locals still in, under the frame's prefix) and its frame."""
        function = call.function
        frame = self._callee_frame(call)
        if placeholders is None:
            self._bind_parameters(call, frame, env)
        else:
            bound = _bound(function, call.positional, call.keywords, call.cls is not None)
            for name, (_, key) in bound.items():
                env[frame.prefix + name] = placeholders[name]
                if key is not None:
                    frame.aliases[name] = self.outer_key(key)
        outer_frame, outer_no_grad, outer_symbols = self.frame, self.no_grad, self.symbols
        self.frame = frame
        self.symbols = self.home_of(function)  # another module's names mean its own
        self.no_grad = self.no_grad or _decorated_no_grad(function, self.symbols)
        self.call_stack.append(function)
        try:
            flow = self.exec_block(function.body, env)
        finally:
            self.call_stack.pop()
            self.frame, self.no_grad, self.symbols = outer_frame, outer_no_grad, outer_symbols
        after = join_envs(flow.normal, flow.returns) or {}
        returned = flow.returned
        if flow.normal is not None:
            returned = join_values(returned, EMPTY.with_shape(NONE))
        return returned or EMPTY, after, frame

    def _callee_frame(self, call: Call) -> Frame:
        depth = self.frame.depth + 1
        prefix = f"#{depth}{call.function.name}:"
        receiver = call.receiver_key
        self_path = self.outer_key(receiver) if receiver else f"{prefix}self"
        site_prefix = call.site or self.frame.site_prefix
        locals_ = self.instances.local_names(call.function)
        frame = Frame(prefix, self_path, {}, call.cls, site_prefix, depth, locals=locals_)
        if id(call.function) in self.closures:
            self._see_enclosing_names(call.function, frame)
            if "self" not in locals_:  # the enclosing method's `self`
                frame.self_path, frame.cls = self.frame.self_path, self.frame.cls
        var_keywords = call.function.args.kwarg
        frame.var_keywords = var_keywords.arg if var_keywords is not None else None
        frame.passed = call.passed
        frame.literals = call.literals
        return frame

    def _see_enclosing_names(self, function: FunctionNode, frame: Frame) -> None:
        """A closure's names that are not its own mean the enclosing function's, as the
        frame calling it (the one whose body defined it) keys them: `optimizer_g` in
        `zero_grad_all()` is `train()`'s local."""
        own = frame.locals or frozenset()
        params = parameter_names(function)
        for node in walk(function):
            if type(node) is not ast.Name or node.id in own or node.id in params:
                continue
            outer = self.key_for(node)
            if outer is not None and outer != node.id:
                frame.enclosing[node.id] = outer

    def _literal_arguments(self, function: FunctionNode, node: ast.Call, method: bool) -> dict:
        """`Call.literals`: the literal each parameter the body tests and never binds again
        gets at this call, passed (`mode="ce"`, a module constant, a literal the caller was
        itself given) or left at a literal default (a constant of the function's own module,
        as Python evaluates it where the `def` runs). Python binds exactly these values, so
        a test of them (`if mode == "l2":`) is decided at this call. Nothing is taken where
        something between the call and the body may change the arguments: a decorator other
        than `staticmethod`/`classmethod`/no-grad, a module's own `__call__` or a forward
        hook, or code that rebinds defaults (`step.__defaults__ = ...`). An argument
        unpacked from `*args` or `**kwargs` may fill any parameter after it: those are left
        out, and a keyword named as a positional-only parameter goes to `**kwargs`."""
        home = self.home_of(function)
        tested = home.remember(("tested-parameters", id(function)), tested_parameters, function)
        if not tested or not self._arguments_arrive_as_given(function, home, method):
            return {}
        arguments = function.args
        ordered = [a.arg for a in arguments.posonlyargs + arguments.args]
        unpacked = any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        )
        passed: dict[str, ast.expr] = {}
        positional_only = {a.arg for a in arguments.posonlyargs}
        taken = ordered[1:] if method and ordered and ordered[0] in ("self", "cls") else ordered
        for name, argument in zip(taken, node.args, strict=False):
            if isinstance(argument, ast.Starred):
                break
            passed[name] = argument
        for keyword in node.keywords:
            if keyword.arg is not None and keyword.arg not in positional_only:
                passed[keyword.arg] = keyword.value
        given = {name: self._argument_value(passed[name]) for name in tested if name in passed}
        left = {name for name in tested if name not in passed}
        if left and not unpacked:
            keyword_defaults = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
            defaults = [
                *zip(reversed(ordered), reversed(arguments.defaults), strict=False),
                *((a.arg, d) for a, d in keyword_defaults if d is not None),
            ]
            used = [(name, default) for name, default in defaults if name in left]
            if used and not self._defaults_rebound():
                given.update((name, _default_value(default, home)) for name, default in used)
        # a float decides no test `_compared` reads, and would only split summary contexts
        return {
            name: value
            for name, value in given.items()
            if value is not NOT_CONSTANT and not isinstance(value, float)
        }

    def _argument_value(self, argument: ast.expr) -> object:
        """A call argument's literal value, or the constant it names where the call is."""
        value = literal_value(argument)
        return self._constant_of(argument) if value is NOT_CONSTANT else value

    def _arguments_arrive_as_given(self, function: FunctionNode, home: Symbols, method: bool):
        """Whether the body receives what the call site passes: no decorator that may wrap
        it (a no-grad one, `staticmethod` and `classmethod` pass them on), and for a
        module's `forward`, no `__call__` of its class and no forward hook in its module."""
        for decorator in function.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = dotted_name(target) or ""
            if name not in ("staticmethod", "classmethod") and not no_grad_decorator(
                decorator, home
            ):
                return False
        if method and function.name == "forward":
            hooked = home.whole_module().registers_hooks
            called = any(
                "__call__" in info.methods and function in info.methods.values()
                for info in home.classes.values()
            )
            return not hooked and not called
        return True

    def _defaults_rebound(self) -> bool:
        """Whether a module the analysis looked into stores `__defaults__` or
        `__kwdefaults__` (or sets attributes by name): a function's defaults may not be the
        ones its `def` wrote."""
        return any(
            module.stores_attribute(name) != 0
            for module in self._modules_seen()
            for name in ("__defaults__", "__kwdefaults__")
        )

    def _bind_parameters(self, call: Call, frame: Frame, env: Env) -> None:
        bound = self.record_call(call)
        for name, (value, key) in bound.items():
            env[frame.prefix + name] = value
            if key is not None:
                frame.aliases[name] = self.outer_key(key)
                frame.given_keys[name] = key

    def record_call(self, call: Call) -> dict:
        """Record what the call passes (`CallSites.record`) and the classes of the objects
        it passes; returns its bound arguments (parameter -> (value, the caller's key))."""
        bound = _bound(call.function, call.positional, call.keywords, call.cls is not None)
        receiver = call.receiver_key if call.cls is not None else None
        renames = self._held_renames(bound)
        self.call_sites.record(
            call.function,
            bound,
            self.listed,
            self._modules_of,
            receiver,
            renames,
            self.runs_with_grad(call.function),
        )
        self._note_object_classes(bound)
        return bound

    def outer_key(self, key: str) -> str:
        """The path a caller's argument stands for beyond the caller: a parameter the caller
        was given and hands on (`train_one_epoch(model, opt)` inside `warmup(model, opt)`)
        is what its own caller passed, not the caller's local copy, which goes when it
        returns (a step two calls deep steps the outer `opt`)."""
        prefix = self.frame.prefix
        if prefix and key.startswith(prefix):
            name = key[len(prefix) :]
            if name in self.frame.aliases:
                return self.frame.aliases[name]
        return key


# a module call's callee known a module only by how the code uses the name (`.parameters()`)
UNSEEN = "unseen"


def _default_value(default: ast.expr, home: Symbols) -> object:
    """A parameter's default: a literal, or a constant of the function's own module."""
    value = literal_value(default)
    if value is NOT_CONSTANT and isinstance(default, ast.Name):
        return home.constant(default.id)
    return value


def tested_parameters(function: FunctionNode) -> frozenset[str]:
    """The parameters a test of the body reads (`if`, `while`, a conditional expression) or
    a call hands on as an argument (whose callee may test it), that nothing in the body
    binds again (an assignment, `del`, `global`, `nonlocal`, a loop or `with` target, an
    import, an exception or `match` capture, a nested definition)."""
    arguments = function.args
    parameters = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    tested: set[str] = set()
    for node in walk(function):
        if isinstance(node, ast.If | ast.IfExp | ast.While):
            tested.update(n.id for n in walk(node.test) if isinstance(n, ast.Name))
        elif isinstance(node, ast.Call):
            handed = [*node.args, *(k.value for k in node.keywords)]
            tested.update(a.id for a in handed if isinstance(a, ast.Name))
    candidates = parameters & tested
    if not candidates:
        return frozenset()
    return frozenset(candidates - (local_names(function, parameters=False) | _declared(function)))


def _declared(function: FunctionNode) -> set[str]:
    """The names a `global` or `nonlocal` statement in the function declares."""
    return {
        name
        for node in walk(function)
        if isinstance(node, ast.Global | ast.Nonlocal)
        for name in node.names
    }


def local_names(function: FunctionNode, parameters: bool = True) -> frozenset[str]:
    """The names local to a function, as Python scopes them: its parameters (unless
    `parameters` is False) and every name it binds, less those it declares `global`. Any
    other name it reads is the module's."""
    arguments = function.args
    names: set[str] = set()
    if parameters:
        names |= {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
        names |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    declared = declared_outside(function)
    for node in walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if node is not function:
                names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)  # `case (_, mode):` binds `mode`
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return frozenset(names - declared)


def declared_outside(function: FunctionNode) -> set[str]:
    """The names `function`'s own body (not a function defined in it) declares `global` or
    `nonlocal`: binding them binds the module's or the enclosing function's name."""
    declared: set[str] = set()
    todo = list(function.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Global | ast.Nonlocal):
            declared.update(node.names)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            blocks = (ast.stmt, ast.excepthandler, ast.match_case)
            todo += [n for n in ast.iter_child_nodes(node) if isinstance(n, blocks)]
    return declared


def _record(fields: tuple[str, ...], node: ast.Call, positional, keywords) -> Value:
    """A record (`Losses(policy_loss, q_loss, alpha_loss)`): each field keeps its own graphs,
    so `losses.alpha_loss` holds only what the alpha loss does."""
    items: list[Value | None] = [v for v, _ in positional] + [None] * len(fields)
    items = items[: len(fields)] if len(positional) <= len(fields) else []
    for name, (value, _) in keywords.items():
        if name in fields and items:
            items[fields.index(name)] = value
    everything = union([v for v, _ in positional] + [v for v, _ in keywords.values()])
    starred = any(isinstance(a, ast.Starred) for a in node.args) or any(
        k.arg is None for k in node.keywords
    )
    if starred or not items or any(i is None for i in items):
        return Value(everything, UNKNOWN)
    shape = ("record", fields, tuple(i.shape for i in items))
    return Value(everything, shape, tuple(i.graphs for i in items))


def _bound(
    function: FunctionNode, positional: list, keywords: dict, method: bool
) -> dict[str, tuple[Value, str | None]]:
    """Parameter name -> (argument value, caller's key) for one call (`self` left out)."""
    arguments = function.args
    params = [a.arg for a in arguments.posonlyargs + arguments.args]
    if method and params and params[0] in ("self", "cls"):
        params = params[1:]
    bound = dict(zip(params, positional, strict=False))
    bound.update((name, value) for name, value in keywords.items() if name is not None)
    return bound


# calls whose backward keeps one operand to give the other its gradient (`SAVING_OPERATORS`)
SAVING_FUNCTIONS = frozenset(
    {"torch.mm", "torch.matmul", "torch.bmm", "torch.mv", "torch.nn.functional.linear"}
)
SAVING_METHODS = frozenset({"mm", "matmul", "bmm", "mv"})


def _saving_call(func: ast.expr, symbols) -> bool:
    if isinstance(func, ast.Attribute) and func.attr in SAVING_METHODS:
        return True
    return symbols.qualify(func) in SAVING_FUNCTIONS


def _calls_forward(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and func.attr == "forward"


def _is_scheduler(shape) -> bool:
    return isinstance(shape, tuple) and shape[0] == "scheduler"


def _keyword(node: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in node.keywords if k.arg == name), None)


def retain_keyword(node: ast.Call) -> ast.keyword | None:
    """`retain_graph=`, or `retain_variables=`, its spelling before PyTorch 0.4."""
    return _keyword(node, "retain_graph") or _keyword(node, "retain_variables")


def _keyword_true(node: ast.Call, name: str) -> bool:
    keyword = _keyword(node, name)
    return keyword is not None and isinstance(keyword.value, ast.Constant) and keyword.value.value


def _retain_flag(node: ast.Call) -> bool | None:
    """True / False when the call says so literally, None when it depends on a variable
    (or on keywords passed through `**kwargs`, or a second positional argument)."""
    if _keyword_true(node, "create_graph"):
        return True
    keyword = retain_keyword(node)
    if keyword is None:
        method = isinstance(node.func, ast.Attribute) and node.func.attr == "backward"
        if any(k.arg is None for k in node.keywords) or (method and len(node.args) >= 2):
            return None  # `loss.backward(**kwargs)`: the caller's keywords decide
        return False
    if isinstance(keyword.value, ast.Constant):
        return bool(keyword.value.value)
    return None


def _decorated_no_grad(function: FunctionNode, symbols: Symbols) -> bool:
    """`@torch.no_grad()`, `@torch.inference_mode()`, `@torch.set_grad_enabled(False)`, or a
    project decorator that applies one of them (YOLOv5's `@smart_inference_mode()`)."""
    return any(no_grad_decorator(d, symbols) for d in function.decorator_list)


def no_grad_decorator(decorator: ast.expr, symbols: Symbols) -> bool:
    """`decorator` applies a no-grad mode (`_decorated_no_grad`)."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    qualified = symbols.qualify(target)
    if qualified in NO_GRAD_CONTEXTS or is_no_grad_alias(decorator, symbols):
        return True
    if qualified in SET_GRAD_ENABLED and isinstance(decorator, ast.Call):
        mode = decorator.args[0] if decorator.args else _keyword(decorator, "mode")
        mode = mode.value if isinstance(mode, ast.keyword) else mode
        return isinstance(mode, ast.Constant) and mode.value is False
    name = dotted_name(target) or ""
    maker = symbols.functions.get(name) if "." not in name else symbols.member(target)
    if isinstance(maker, ast.FunctionDef):
        home = symbols.home(maker)
        return home.remember(
            ("applies no grad", id(maker)), lambda f, h=home: _applies_no_grad(f, h), maker
        )
    return False


def is_no_grad_alias(node: ast.expr, symbols: Symbols) -> bool:
    """`with no_grad():` where the module binds `no_grad = torch.no_grad` (or defines `def
    frozen(): return torch.no_grad()`), `with evaluation:` or `@evaluation` where it binds
    `evaluation = torch.no_grad()`: a name the module binds once, at its top level, to one
    of torch's no-grad switches (`_no_grad_aliases`)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        wanted, name = "maker", node.func.id
    elif isinstance(node, ast.Name):
        wanted, name = "context", node.id
    else:
        return False
    tree = symbols.tree
    if tree is None:
        return False
    aliases = symbols.remember(("no grad aliases", id(tree)), _no_grad_aliases(symbols), tree)
    return aliases.get(name) == wanted


def _no_grad_aliases(symbols: Symbols):
    """For `Symbols.remember`: name -> "maker" (`no_grad = torch.no_grad`, a function whose
    every `return` makes a no-grad context) or "context" (`evaluation = torch.no_grad()`),
    for the names the module binds at its top level and nowhere else."""

    def compute(tree: ast.Module) -> dict[str, str]:
        found: dict[str, str] = {}
        for statement in tree.body:
            if isinstance(statement, ast.FunctionDef) and not statement.decorator_list:
                returned = [n.value for n in walk(statement) if isinstance(n, ast.Return)]
                if returned and all(_makes_no_grad(r, symbols) for r in returned):
                    found[statement.name] = "maker"
            if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
                continue
            target, value = statement.targets[0], statement.value
            if isinstance(target, ast.Name) and symbols.qualify(value) in NO_GRAD_CONTEXTS:
                found[target.id] = "maker"
            elif isinstance(target, ast.Name) and _makes_no_grad(value, symbols):
                found[target.id] = "context"
        bound: dict[str, int] = {}
        for node in walk(tree):
            name = _bound_name(node)
            if name is not None:
                bound[name] = bound.get(name, 0) + 1
        return {name: kind for name, kind in found.items() if bound.get(name) == 1}

    return compute


def _makes_no_grad(node: ast.expr | None, symbols: Symbols) -> bool:
    return isinstance(node, ast.Call) and symbols.qualify(node.func) in NO_GRAD_CONTEXTS


def _bound_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        return node.id
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.arg):
        return node.arg
    if isinstance(node, ast.alias):
        return (node.asname or node.name).partition(".")[0]
    return None


def _applies_no_grad(decorator: ast.FunctionDef, symbols: Symbols) -> bool:
    """A decorator (or decorator factory) of the project whose body names only no-grad
    contexts among torch's grad modes: what it returns runs its function without grad."""
    named = {symbols.qualify(node) for node in walk(decorator) if isinstance(node, ast.Attribute)}
    return bool(named & NO_GRAD_CONTEXTS) and not named & GRAD_CONTEXTS


GRAD_CONTEXTS = _grad_mode_names("enable_grad") | SET_GRAD_ENABLED

# names whose mention makes a function do autograd work, even without grad
AUTOGRAD_WORK = frozenset(
    {"backward", "step", "zero_grad", "grad", "retain_graph", "requires_grad", "requires_grad_",
     "register_hook", "enable_grad", "set_grad_enabled", "manual_backward", "autograd"}
)  # fmt: skip


# an optimizer's step hooks (`register_step_post_hook(clear)`), which may clear its gradients
STEP_HOOKS = frozenset({"register_step_post_hook", "register_step_pre_hook"})


def _clears_own_gradients(info, symbols: Symbols, depth: int = 0) -> bool:
    """Whether a project optimizer class (or a project class it derives from) calls
    `zero_grad` or sets a `.grad` in one of its methods (`step()` that clears what it used)."""
    for method in info.methods.values():
        if any(clears_gradients(node) for node in walk(method)):
            return True
    if depth >= 3:
        return False
    return any(
        _clears_own_gradients(base, symbols.home(base.node), depth + 1)
        for base in symbols.file_bases(info)
    )


def _trainable_filter(node: ast.Call) -> bool:
    """`filter(lambda p: p.requires_grad, model.parameters())`: the parameters an optimizer
    built over it steps are the module's (those frozen are never changed by a step)."""
    if not (isinstance(node.func, ast.Name) and node.func.id == "filter"):
        return False
    predicate = node.args[0] if len(node.args) == 2 else None
    return isinstance(predicate, ast.Lambda) and any(
        isinstance(n, ast.Attribute) and n.attr == "requires_grad" for n in walk(predicate.body)
    )


def is_text(node: ast.expr) -> bool:
    """A string literal or an f-string: its methods give back strings (or lists of them)."""
    return isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, str)
    )


def _optimizer_class(qualified: str) -> bool:
    return qualified.startswith("torch.optim.") and ".lr_scheduler." not in qualified


def _scheduler_class(qualified: str) -> bool:
    return qualified.startswith("torch.optim.lr_scheduler.")


def _mentioned(node: ast.AST) -> str | None:
    """The name an attribute, a name or a keyword argument says."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return node.arg if isinstance(node, ast.keyword) else None


CLOSURE_WORK = AUTOGRAD_WORK | {"detach", "detach_"}


def closure_work(function: FunctionNode) -> bool:
    """Whether a function defined inside another names autograd work (`AUTOGRAD_WORK`, or a
    `detach`) or declares `nonlocal` names (`nonlocal hidden; hidden = hidden.detach()`):
    what a rule may ask about when the enclosing function calls it."""
    for node in walk(function):
        if isinstance(node, ast.Nonlocal):
            return True
        if not isinstance(node, ast.keyword) and _mentioned(node) in CLOSURE_WORK:
            return True
    return False


def inert(function: FunctionNode, symbols: Symbols, depth: int = 0) -> bool:
    """Whether a call of `function` without grad leaves nothing a rule asks about: it (and
    each project function it calls, three calls deep) names no autograd work, declares no
    `global`, stores into, or changes in place, nothing but its own locals, and returns none
    of its parameters (which would hand back the caller's tensor and its graph). Asked once
    per function and module."""
    return symbols.remember(("inert", id(function)), lambda f: _inert(f, symbols, depth), function)


def _inert(function: FunctionNode, symbols: Symbols, depth: int) -> bool:
    arguments = function.args
    parameters = {
        a.arg
        for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        + [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    }
    assigned = {
        n.id for n in walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    local = assigned - parameters
    for node in walk(function):
        if isinstance(node, ast.Global | ast.Nonlocal):
            return False
        if _mentioned(node) in AUTOGRAD_WORK:
            return False
        stored = isinstance(node, ast.Attribute | ast.Subscript) and isinstance(
            node.ctx, ast.Store | ast.Del
        )
        if stored and root_name(node) not in local:
            return False
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            changes = node.func.attr.endswith("_") and not node.func.attr.startswith("_")
            if changes and root_name(node.func.value) not in local:
                return False
        if isinstance(node, ast.Return) and node.value is not None:
            items = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            if any(root_name(item) in parameters for item in items):
                return False
        if isinstance(node, ast.Call) and depth < 3:
            for callee in project_callees(node.func, symbols, constructors=True):
                if callee is not function and not inert(callee, symbols.home(callee), depth + 1):
                    return False
    return True


def _builtin_result(name: str, arguments: list[Value]) -> Value:
    shaper = _BUILTIN_SHAPERS.get(name)
    if shaper is None:
        return EMPTY.with_shape(("seq", OTHER) if name == "range" else OTHER)
    return shaper(arguments)


def _sequence_of(arguments: list[Value], kind: str = "seq") -> Value:
    if not arguments:
        return EMPTY.with_shape((kind, None))
    return Value(arguments[0].graphs, (kind, shapes.item_shape(arguments[0].shape)))


_BUILTIN_NAMES = set(dir(__import__("builtins")))

_BUILTIN_SHAPERS = {
    "tuple": lambda args: _sequence_of(args, "vtuple"),
    "list": _sequence_of,
    "sorted": _sequence_of,
    "reversed": _sequence_of,
    "iter": _sequence_of,
    "enumerate": lambda args: Value(
        union(args), ("seq", ("tuple", (OTHER, shapes.item_shape(args[0].shape if args else None))))
    ),
    "zip": lambda args: Value(
        union(args), ("seq", ("tuple", tuple(shapes.item_shape(a.shape) for a in args)))
    ),
    "next": lambda args: Value(union(args), shapes.item_shape(args[0].shape) if args else None),
    "sum": lambda args: Value(union(args), UNKNOWN),
    "max": lambda args: Value(union(args), UNKNOWN),
    "min": lambda args: Value(union(args), UNKNOWN),
    "abs": lambda args: Value(union(args), UNKNOWN),
    "dict": lambda args: Value(union(args), UNKNOWN_ENTRIES, (union(args),)),
    "map": lambda args: Value(union(args), UNKNOWN),
}


def _added_positions(attr: str, old: Value, added: list[Value]) -> tuple | None:
    """Each position's graphs once `append`/`extend` added to a list whose positions are
    known (`transition = [state, log_prob]`, then `transition.extend([next_state, reward])`,
    unpacked `state, log_prob, next_state, reward = transition`): the old positions, then
    the added item's or each added position's. None when either is unknown. A list built
    empty keeps none after an append (appends come in loops, where items stand for one
    another); after an `extend` by a list or tuple, it holds that one's positions."""
    if attr not in ("append", "extend") or not added:
        return None  # `insert`, `appendleft`: the positions after it move
    return concatenated_positions(old, added[0], attr == "append")


def concatenated_positions(old: Value, added: Value, one_item: bool = False) -> tuple | None:
    """`old`'s positions followed by `added`'s (as one item when `one_item`); None unless
    both are known and `old` has some, or is known empty and `added` is a whole list or
    tuple (`transition = []`, then `transition.extend([log_pi, v])`). In a loop, the lists of
    two iterations have other lengths, and their join keeps no positions."""
    if old.parts is None or not _is_seq(old.shape) or (not old.parts and one_item):
        return None
    if one_item:
        return old.parts + (added.graphs,)
    if added.parts is None or not (_is_seq(added.shape) or _is_tuple(added.shape)):
        return None
    return old.parts + added.parts


def _is_tuple(shape) -> bool:
    return isinstance(shape, tuple) and shape[0] == "tuple"


def _seq_item(value: Value):
    shape = value.shape
    if isinstance(shape, tuple) and shape[0] == "seq":
        return shape[1]
    return None


def _same_objects(values: list[Value]) -> Value:
    """What a wrapper that hands back the objects it was given returns: the one object, or
    a tuple of them, each position its own."""
    if len(values) == 1:
        return values[0]
    shape = ("tuple", tuple(v.shape for v in values))
    return Value(union(values), shape, tuple(v.graphs for v in values))


def _is_seq(shape) -> bool:
    return isinstance(shape, tuple) and shape[0] == "seq"


def _is_trainer_objects(shape) -> bool:
    """A module, an optimizer, or a list of them (`[G, D]`)."""
    if shapes.is_module(shape):
        return True
    if isinstance(shape, tuple) and shape[0] == "optimizer":
        return True
    return (
        isinstance(shape, tuple)
        and shape[0] == "tuple"
        and bool(shape[1])
        and all(_is_trainer_objects(item) for item in shape[1])
    )


def _same_names(target: ast.expr, given: ast.expr) -> bool:
    """`self.model, self.opt` bound from `(model, opt)`: position by position, the names end
    alike (nested lists element by element)."""
    if isinstance(target, ast.Tuple | ast.List) and isinstance(given, ast.Tuple | ast.List):
        return len(target.elts) == len(given.elts) and all(
            _same_names(t, g) for t, g in zip(target.elts, given.elts, strict=True)
        )
    names = dotted_name(target), dotted_name(given)
    return None not in names and names[0].rpartition(".")[2] == names[1].rpartition(".")[2]


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _classification_metric(qualified: str | None) -> tuple | None:
    """`torchmetrics.Accuracy(...)` constructs a metric object; `torchmetrics.functional.
    accuracy(...)` is a value without graph; any other torchmetrics name: None."""
    if qualified is None or qualified.split(".")[0] != "torchmetrics":
        return None
    name = qualified.rsplit(".", 1)[-1]
    base = name.lower().replace("_", "")
    for prefix in ("binary", "multiclass", "multilabel"):
        base = base.removeprefix(prefix)
    if base not in CLASSIFICATION_METRICS:
        return None
    return ("constructed", METRIC) if name[:1].isupper() else ("graph_free", TENSOR)


def _values_and_indices(node: ast.Call, qualified: str | None) -> bool:
    """Whether `node` returns a (values, indices) pair: a tensor method of `PAIR_METHODS`
    (`x.sort()`), or of `PAIR_WITH_DIM` given a dimension (`x.max(1)`, `x.min(dim=0)`), or
    the `torch.` function of the same name with the tensor first (`torch.max(x, 1)`)."""
    func = node.func
    if qualified is not None and qualified.startswith("torch.") and qualified.count(".") == 1:
        name, dims = qualified[len("torch.") :], node.args[1:]
    elif isinstance(func, ast.Attribute):
        name, dims = func.attr, node.args
    else:
        return False
    if name in PAIR_METHODS:
        return True
    if name not in PAIR_WITH_DIM:
        return False
    keywords = {k.arg for k in node.keywords}
    return "dim" in keywords or (len(dims) == 1 and int_constant(dims[0]) is not None)


def _returned_attributes(function: FunctionNode, after: Env, prefix: str) -> tuple[str, Env] | None:
    """(the callee's key of the local it returns, the attributes it set on it by their path
    below it: `model.G`, `model.optimizer_G` of `return model`); None unless the function
    sets up the object it returns (`_returned_name`)."""
    name = _factory_local(function)
    if name is None:
        return None
    local = f"{prefix}{name}"
    held = {k[len(local) + 1 :]: v for k, v in after.items() if k.startswith(local + ".")}
    return (local, held) if held else None


_RETURNED_NAME: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _factory_local(function: FunctionNode) -> str | None:
    """`_returned_name`, worked out once per function."""
    name = _RETURNED_NAME.get(function, False)
    if name is False:
        name = _RETURNED_NAME[function] = _returned_name(function)
    return name


def _returned_name(function: FunctionNode) -> str | None:
    """The one name every `return` of the function's own body returns, when the body also
    calls a method of it or sets an attribute on it (`model.initialize()`, `model.opt =
    ...`: a factory that sets up the object it returns); else None."""
    names: set[str | None] = set()
    used: set[str] = set()  # names whose method is called or attribute set
    stack = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda):
            continue
        if isinstance(node, ast.Return):
            names.add(node.value.id if isinstance(node.value, ast.Name) else None)
        owner = node.func if isinstance(node, ast.Call) else node
        if (
            isinstance(owner, ast.Attribute)
            and isinstance(owner.value, ast.Name)
            and (owner is not node or isinstance(owner.ctx, ast.Store))
        ):
            used.add(owner.value.id)
        stack.extend(child_nodes(node))
    name = names.pop() if len(names) == 1 else None
    return name if name in used else None


def sets_up_returned_object(function: FunctionNode) -> bool:
    """Whether the function is a factory that sets up the object it returns
    (`_returned_name`): its body must run where it is called, so that the caller's name
    gets the attributes (a summary or a plain run would drop them with the callee's
    locals)."""
    return _factory_local(function) is not None
