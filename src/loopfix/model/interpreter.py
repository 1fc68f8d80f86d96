"""An abstract interpreter that follows autograd graphs through one scope's statements.

It runs each statement over abstract values (`graphs.Value`): module calls build graph, most
operations pass graph on, `.detach()` and friends drop it, backward calls consume it, and each
loop is run to a fixpoint with graphs relabelled as they cross the loop's back-edge. Calls to
functions and `nn.Module` classes defined in the same file are followed into their bodies.

The interpreter only records observations (`Observations`); rules turn them into findings.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from loopfix.model import shapes
from loopfix.model.graphs import (
    EMPTY,
    OPAQUE,
    BackwardSite,
    CarriedGraph,
    Env,
    Flow,
    Graph,
    UpdateSite,
    Value,
    join_envs,
    join_values,
    union,
)
from loopfix.model.shapes import NONE, OTHER, TENSOR, UNKNOWN
from loopfix.model.symbols import ClassInfo, FunctionNode, Symbols, dotted_name

MAX_LOOP_ROUNDS = 12
MAX_CALL_DEPTH = 4

# fmt: off
# Tensor methods whose result carries no graph.
GRAPH_FREE_METHODS = {
    "detach", "item", "tolist", "numpy", "size", "dim", "numel", "nelement", "stride",
    "data_ptr", "argmax", "argmin", "eq", "ne", "lt", "gt", "le", "ge", "nonzero", "long",
    "int", "bool", "byte", "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
    "new", "is_contiguous", "element_size", "get_device", "zero_",
}
GRAPH_FREE_ATTRIBUTES = {"data", "grad", "shape", "dtype", "device", "requires_grad", "is_leaf"}
CONTAINER_ADDERS = {"append", "extend", "insert", "appendleft"}
BUILTINS_WITHOUT_GRAPH = {
    "print", "len", "range", "isinstance", "issubclass", "hasattr", "int", "float", "str",
    "bool", "repr", "format", "id", "type", "open", "round", "callable", "getattr", "setattr",
}
TENSOR_CREATION = {
    "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange",
    "linspace", "logspace", "eye", "tensor", "as_tensor", "from_numpy", "zeros_like",
    "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randint_like",
    "manual_seed", "device", "Generator", "no_grad", "inference_mode",
}
# nn classes without parameters: calling them builds no graph of their own.
PARAMETER_FREE_MODULES = {
    "ReLU", "Tanh", "Sigmoid", "Softmax", "LogSoftmax", "Dropout", "Identity", "Flatten",
    "MaxPool1d", "MaxPool2d", "AvgPool2d", "GELU", "LeakyReLU", "ELU", "SiLU",
}
MODULE_PLUMBING = {
    "to", "cuda", "cpu", "train", "eval", "float", "double", "half", "requires_grad_",
    "apply", "share_memory", "type",
}
MODULE_QUERIES = {
    "parameters", "named_parameters", "state_dict", "modules", "children", "buffers",
    "zero_grad", "load_state_dict", "named_modules",
}
# fmt: on
STATE_INITIALISER_PREFIXES = ("init", "reset", "zero", "begin", "new_state", "initial")
NO_GRAD_CONTEXTS = {"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad"}
BACKWARD_FUNCTIONS = {"torch.autograd.backward", "torch.autograd.grad"}


@dataclass
class Observations:
    """What the interpreter saw, shared by every scope of one module."""

    loops: dict[int, ast.For | ast.While | ast.AsyncFor] = field(default_factory=dict)
    backwards: dict[int, BackwardSite] = field(default_factory=dict)
    signatures: dict[int, frozenset] = field(default_factory=dict)
    reached_consumers: dict[int, set[int]] = field(default_factory=dict)
    # backward id -> backwards whose freed (not retained) graph it goes through again
    freed_reaches: dict[int, set[int]] = field(default_factory=dict)
    # backward id -> optimizer steps that changed weights its graph saved
    stale_reaches: dict[int, set[int]] = field(default_factory=dict)
    updates: dict[int, UpdateSite] = field(default_factory=dict)
    # backward id -> module paths whose graph it goes through (None: a module it cannot name)
    backward_modules: dict[int, set[str | None]] = field(default_factory=dict)
    # every path a module-call site is known by (a caller and the callee may name it apart)
    site_modules: dict[tuple[int, ...], set[str | None]] = field(default_factory=dict)
    # backwards whose retained graph is still held when its scope ends (returned, on self)
    escaping: set[int] = field(default_factory=set)
    # backwards whose loss has no graph loopfix can see, or some of unknown origin
    partly_unknown: set[int] = field(default_factory=set)
    carried: dict[tuple[int, str], CarriedGraph] = field(default_factory=dict)
    writers: dict[tuple[int, str], list[ast.stmt]] = field(default_factory=dict)
    shapes_before: dict[int, dict] = field(default_factory=dict)
    shapes_after: dict[int, dict] = field(default_factory=dict)

    def note_shapes(self, table: dict[int, dict], statement: ast.stmt, env: Env | None) -> None:
        if env is None:
            return
        seen = table.setdefault(id(statement), {})
        for key, value in env.items():
            if "#" not in key:
                seen[key] = shapes.join(seen.get(key), value.shape)


@dataclass
class Call:
    """A call into a function defined in the analysed file."""

    function: FunctionNode
    positional: list[tuple[Value, str | None]]
    keywords: dict[str | None, tuple[Value, str | None]]
    receiver_key: str | None
    cls: ClassInfo | None
    site: tuple[int, ...]

    def argument_values(self) -> list[Value]:
        return [v for v, _ in self.positional] + [v for v, _ in self.keywords.values()]


@dataclass
class Frame:
    prefix: str = ""
    self_path: str | None = None
    aliases: dict[str, str] = field(default_factory=dict)
    cls: ClassInfo | None = None
    site_prefix: tuple[int, ...] = ()
    depth: int = 0

    @property
    def is_top(self) -> bool:
        return self.depth == 0


class Interpreter:
    def __init__(self, symbols: Symbols, observations: Observations) -> None:
        self.symbols = symbols
        self.obs = observations
        self._ids: dict[tuple[str, int], int] = {}
        self.frame = Frame()
        self.loop_stack: list[int] = []
        self.written_stack: list[set[str]] = []
        self.call_stack: list[FunctionNode] = []
        self.no_grad = False
        self.top_statement: ast.stmt | None = None
        self._constructing: list[ast.Call] = []
        # `for h in hidden:` -> {"h": "hidden"}, so that `h.detach_()` clears `hidden`.
        self.iterated_from: dict[str, str] = {}

    # ---------------------------------------------------------------- entry points
    def run_scope(self, body: list[ast.stmt], frame: Frame, env: Env) -> None:
        self.frame = frame
        flow = self.exec_block(body, env)
        # A retained graph still held by what the scope returns or keeps on `self` may be
        # backwarded by code loopfix does not see.
        kept = [flow.returned] if flow.returned is not None else []
        for final in (flow.normal, flow.returns):
            kept += [v for k, v in (final or {}).items() if k.startswith("self.")]
        for value in kept:
            self.obs.escaping |= {g.consumed_by for g in value.graphs if g.retained}

    # ---------------------------------------------------------------- identities
    def _id(self, kind: str, node: ast.AST) -> int:
        """Ids in order of first evaluation: stable across edits that add no such nodes."""
        key = (kind, id(node))
        if key not in self._ids:
            self._ids[key] = sum(1 for k in self._ids if k[0] == kind)
        return self._ids[key]

    def key_for(self, node: ast.expr) -> str | None:
        dotted = dotted_name(node)
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        frame = self.frame
        if root == "self" and frame.self_path is not None:
            base = frame.self_path
        elif rest and root in frame.aliases:
            base = frame.aliases[root]
        else:
            base = frame.prefix + root
        return f"{base}.{rest}" if rest else base

    def module_path(self, node: ast.expr) -> str | None:
        """The caller-independent path of a module or optimizer expression."""
        dotted = dotted_name(node)
        if dotted is not None and "." not in dotted and dotted in self.frame.aliases:
            return self.frame.aliases[dotted]
        return self.key_for(node)

    def note_write(self, key: str) -> None:
        for written in self.written_stack:
            written.add(key)
        if self.top_statement is None:
            return
        for loop_id in self.loop_stack:
            statements = self.obs.writers.setdefault((loop_id, key), [])
            if self.top_statement not in statements:
                statements.append(self.top_statement)

    # ---------------------------------------------------------------- statements
    def exec_block(self, statements: list[ast.stmt], env: Env) -> Flow:
        flow = Flow(normal=env)
        for statement in statements:
            if flow.normal is None:
                break
            if self.frame.is_top:
                outer, self.top_statement = self.top_statement, statement
                self.obs.note_shapes(self.obs.shapes_before, statement, flow.normal)
                step = self.exec_statement(statement, flow.normal)
                self.obs.note_shapes(self.obs.shapes_after, statement, step.normal)
                self.top_statement = outer
            else:
                step = self.exec_statement(statement, flow.normal)
            flow = flow.then(step)
        return flow

    def exec_statement(self, node: ast.stmt, env: Env) -> Flow:
        handler = getattr(self, f"stmt_{type(node).__name__}", None)
        if handler is not None:
            return handler(node, env)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child, env)
        return Flow(normal=env)

    def stmt_Assign(self, node: ast.Assign, env: Env) -> Flow:
        target, source = node.targets[0], node.value
        if (
            len(node.targets) == 1
            and isinstance(target, ast.Tuple | ast.List)
            and isinstance(source, ast.Tuple | ast.List)
            and len(target.elts) == len(source.elts)
            and not any(isinstance(e, ast.Starred) for e in [*target.elts, *source.elts])
        ):  # `a, b = f(x), g(y)`: each name gets its own value
            values = [self.eval(e, env) for e in source.elts]
            for element, value in zip(target.elts, values, strict=True):
                self.bind(element, value, env)
            return Flow(normal=env)
        value = self.eval(node.value, env)
        for target in node.targets:
            self.bind(target, value, env)
        return Flow(normal=env)

    def stmt_AnnAssign(self, node: ast.AnnAssign, env: Env) -> Flow:
        if node.value is not None:
            self.bind(node.target, self.eval(node.value, env), env)
        return Flow(normal=env)

    def stmt_AugAssign(self, node: ast.AugAssign, env: Env) -> Flow:
        value = self.eval(node.value, env)
        old = self.eval(node.target, env) if not isinstance(node.target, ast.Subscript) else EMPTY
        shape = (
            TENSOR if TENSOR in (old.shape, value.shape) else shapes.join(old.shape, value.shape)
        )
        self.bind(node.target, Value(old.graphs | value.graphs, shape), env)
        return Flow(normal=env)

    def stmt_Expr(self, node: ast.Expr, env: Env) -> Flow:
        self.eval(node.value, env)
        return Flow(normal=env)

    def stmt_Return(self, node: ast.Return, env: Env) -> Flow:
        value = self.eval(node.value, env) if node.value is not None else EMPTY.with_shape(NONE)
        return Flow(normal=None, returns=dict(env), returned=value)

    def stmt_Break(self, node: ast.Break, env: Env) -> Flow:
        return Flow(normal=None, breaks=dict(env))

    def stmt_Continue(self, node: ast.Continue, env: Env) -> Flow:
        return Flow(normal=None, continues=dict(env))

    def stmt_Raise(self, node: ast.Raise, env: Env) -> Flow:
        if node.exc is not None:
            self.eval(node.exc, env)
        return Flow(normal=None)

    def stmt_Delete(self, node: ast.Delete, env: Env) -> Flow:
        for target in node.targets:
            key = self.key_for(target)
            if key is not None:
                env.pop(key, None)
        return Flow(normal=env)

    def stmt_FunctionDef(self, node: ast.stmt, env: Env) -> Flow:
        return Flow(normal=env)

    stmt_AsyncFunctionDef = stmt_ClassDef = stmt_Import = stmt_ImportFrom = stmt_FunctionDef
    stmt_Global = stmt_Nonlocal = stmt_Pass = stmt_FunctionDef

    def stmt_If(self, node: ast.If, env: Env) -> Flow:
        self.eval(node.test, env)
        taken, skipped = dict(env), dict(env)
        none_check = self._none_check(node.test)
        if none_check is not None:
            key, none_when_true = none_check
            if key in env:  # on the branch where it is None, it holds no graph
                (taken if none_when_true else skipped)[key] = EMPTY.with_shape(NONE)
        return self.exec_block(node.body, taken).join(self.exec_block(node.orelse, skipped))

    def _none_check(self, test: ast.expr) -> tuple[str, bool] | None:
        """`x is None` -> (x, True); `x is not None` -> (x, False)."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        right = test.comparators[0]
        if not (isinstance(right, ast.Constant) and right.value is None):
            return None
        key = self.key_for(test.left)
        if key is None or not isinstance(test.ops[0], ast.Is | ast.IsNot):
            return None
        return key, isinstance(test.ops[0], ast.Is)

    def stmt_Match(self, node: ast.Match, env: Env) -> Flow:
        self.eval(node.subject, env)
        flow = Flow(normal=dict(env))
        for case in node.cases:
            flow = flow.join(self.exec_block(case.body, dict(env)))
        return flow

    def stmt_With(self, node: ast.With, env: Env) -> Flow:
        disables_grad = False
        for item in node.items:
            if self._is_no_grad_context(item.context_expr):
                disables_grad = True
            else:
                self.eval(item.context_expr, env)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, EMPTY, env)
        outer, self.no_grad = self.no_grad, self.no_grad or disables_grad
        try:
            return self.exec_block(node.body, env)
        finally:
            self.no_grad = outer

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, node: ast.Try, env: Env) -> Flow:
        before = dict(env)
        body = self.exec_block(node.body, env)
        flow = self.exec_block(node.orelse, body.normal) if body.normal is not None else body
        flow = body.then(flow) if body.normal is not None else body
        handler_start = join_envs(before, body.normal)
        for handler in node.handlers:
            start = dict(handler_start or before)
            if handler.name:
                start[self.frame.prefix + handler.name] = EMPTY
            flow = flow.join(self.exec_block(handler.body, start))
        if node.finalbody and flow.normal is not None:
            flow = flow.then(self.exec_block(node.finalbody, flow.normal))
        return flow

    stmt_TryStar = stmt_Try

    def stmt_For(self, node: ast.For | ast.AsyncFor | ast.While, env: Env) -> Flow:
        loop_id = self._id("loop", node)
        if self.frame.is_top:
            self.obs.loops[loop_id] = node
        head, exits = dict(env), Flow(normal=None)
        outer_loops = tuple(self.loop_stack)
        self.loop_stack.append(loop_id)
        try:
            for _ in range(MAX_LOOP_ROUNDS):
                body_env = dict(head)
                self.written_stack.append(set())
                if isinstance(node, ast.While):
                    self.eval(node.test, body_env)
                else:
                    items = self.eval(node.iter, body_env)
                    source, target = self.key_for(node.iter), self.key_for(node.target)
                    if source is not None and target is not None:
                        self.iterated_from[target] = source
                    self.bind(
                        node.target, items.with_shape(shapes.item_shape(items.shape)), body_env
                    )
                flow = self.exec_block(node.body, body_env)
                written = self.written_stack.pop()
                exits = exits.join(Flow(None, None, flow.breaks, flow.returns, flow.returned))
                back = join_envs(flow.normal, flow.continues)
                crossed = None if back is None else cross(back, loop_id, written, outer_loops)
                new_head = head if crossed is None else join_envs(head, crossed)
                if new_head == head:
                    break
                head = new_head
        finally:
            self.loop_stack.pop()
        after = self.exec_block(node.orelse, dict(head))
        normal = join_envs(after.normal, exits.breaks)
        return Flow(normal, after.continues, after.breaks, exits.returns, exits.returned).join(
            Flow(None, None, None, after.returns, after.returned)
        )

    stmt_AsyncFor = stmt_While = stmt_For

    # ---------------------------------------------------------------- binding
    def bind(self, target: ast.expr, value: Value, env: Env, *, write: bool = True) -> None:
        if isinstance(target, ast.Tuple | ast.List):
            items = _item_shapes(value.shape, target.elts)
            for element, shape in zip(target.elts, items, strict=True):
                self.bind(element, value.with_shape(shape), env, write=write)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, value.with_shape(("seq", value.shape)), env, write=write)
        elif isinstance(target, ast.Subscript):
            self._bind_item(target, value, env)
        else:
            key = self.key_for(target)
            if key is None:
                self.eval(target.value, env) if isinstance(target, ast.Attribute) else None
                return
            env[key] = value
            if write:
                self.note_write(key)

    def _bind_item(self, target: ast.Subscript, value: Value, env: Env) -> None:
        key = self.key_for(target.value)
        self.eval(target.slice, env)
        if key is None:
            return
        old = env.get(key, EMPTY)
        # An item replaced by a graph-free value is taken to be detached in place
        # (`hidden[i] = hidden[i].detach()` in a loop over all items): precision first.
        graphs = old.graphs | value.graphs if value.graphs else frozenset()
        env[key] = Value(graphs, old.shape)
        self.note_write(key)

    def clear(self, node: ast.expr, env: Env) -> None:
        """`x.detach_()`: x, or the container x was taken from, no longer holds graph."""
        while isinstance(node, ast.Subscript):
            node = node.value
        key = self.key_for(node)
        for target in (key, self.iterated_from.get(key)):
            if target is not None and target in env:
                env[target] = Value(frozenset(), env[target].shape)
                self.note_write(target)

    # ---------------------------------------------------------------- expressions
    def eval(self, node: ast.expr | None, env: Env) -> Value:
        if node is None:
            return EMPTY
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is not None:
            value = handler(node, env)
        else:
            children = [self.eval(c, env) for c in ast.iter_child_nodes(node) if _is_expr(c)]
            value = Value(union(children), UNKNOWN)
        return Value(frozenset(), value.shape) if self.no_grad and not _is_alias(node) else value

    def expr_Constant(self, node: ast.Constant, env: Env) -> Value:
        return EMPTY.with_shape(NONE if node.value is None else OTHER)

    def expr_Name(self, node: ast.Name, env: Env) -> Value:
        key = self.key_for(node)
        if key in env:
            return env[key]
        if node.id == "self" and self.frame.cls is not None and self.frame.cls.is_module:
            return EMPTY.with_shape(shapes.module("custom", self.frame.cls.node.name))
        if node.id in self.symbols.globals:
            return EMPTY.with_shape(self.symbols.static_shape(self.symbols.globals[node.id]))
        if self._is_known_name(node.id):
            return EMPTY
        return OPAQUE  # a closure variable or a name bound elsewhere: origin unknown

    def _is_known_name(self, name: str) -> bool:
        symbols = self.symbols
        return (
            name in symbols.imports
            or name in symbols.functions
            or name in symbols.classes
            or name in _BUILTIN_NAMES
        )

    def expr_Attribute(self, node: ast.Attribute, env: Env) -> Value:
        key = self.key_for(node)
        if key is not None and key in env:
            return env[key]
        constructed = self._self_attribute(node)
        if constructed is not None:
            return constructed
        base = self.eval(node.value, env)
        if node.attr in GRAPH_FREE_ATTRIBUTES:
            return EMPTY.with_shape(TENSOR if node.attr in {"data", "grad"} else OTHER)
        info = self.symbols.module_class(base.shape)
        if info is not None and node.attr in info.attributes:
            return EMPTY.with_shape(self.symbols.static_shape(info.attributes[node.attr]))
        return Value(base.graphs, None)

    def _self_attribute(self, node: ast.Attribute) -> Value | None:
        """`self.opt_d` in a method: what `__init__` built there, when it is a torch object
        (module, optimizer, scheduler, scaler), evaluated as `__init__` would."""
        cls = self.frame.cls
        if cls is None or not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return None
        init = cls.attributes.get(node.attr)
        if not isinstance(init, ast.Call):
            return None
        qualified = self.symbols.qualify(init.func) or ""
        if not qualified.startswith("torch.") or init in self._constructing:
            return None
        self._constructing.append(init)
        try:
            return EMPTY.with_shape(self.eval(init, {}).shape)
        finally:
            self._constructing.pop()

    def expr_Subscript(self, node: ast.Subscript, env: Env) -> Value:
        base = self.eval(node.value, env)
        self.eval(node.slice, env)
        shape = base.shape
        index = node.slice
        if (
            isinstance(shape, tuple)
            and shape[0] == "tuple"
            and isinstance(index, ast.Constant)
            and isinstance(index.value, int)
            and -len(shape[1]) <= index.value < len(shape[1])
        ):
            return base.with_shape(shape[1][index.value])
        if isinstance(index, ast.Slice):
            return base
        if isinstance(shape, tuple) and shape[0] == "dict" and isinstance(index, ast.Constant):
            return base.with_shape(dict(shape[1]).get(index.value, UNKNOWN))
        return base.with_shape(shapes.item_shape(shape))

    def expr_Tuple(self, node: ast.Tuple, env: Env) -> Value:
        items = [self.eval(e, env) for e in node.elts]
        return Value(union(items), ("tuple", tuple(i.shape for i in items)))

    def expr_List(self, node: ast.List, env: Env) -> Value:
        items = [self.eval(e, env) for e in node.elts]
        if any(_is_trainer_object(i.shape) for i in items) and not any(
            isinstance(e, ast.Starred) for e in node.elts
        ):  # [opt_g, opt_d]: indexable like a tuple, each optimizer kept apart
            return Value(union(items), ("tuple", tuple(i.shape for i in items)))
        return Value(union(items), ("seq", shapes.join_all(i.shape for i in items)))

    def expr_Dict(self, node: ast.Dict, env: Env) -> Value:
        """A param group `{"params": model.parameters(), "lr": ...}` holds its params."""
        values = [self.eval(v, env) for v in node.values]
        for key in node.keys:
            self.eval(key, env)
        for key, value in zip(node.keys, values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "params":
                paths = shapes.param_paths(value.shape)
                if paths is not None:
                    return EMPTY.with_shape(("params", paths))
        if all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys) and any(
            _is_trainer_object(v.shape) for v in values
        ):  # {"g": opt_g, "d": opt_d}: keep each entry's identity
            entries = tuple((k.value, v.shape) for k, v in zip(node.keys, values, strict=True))
            return Value(union(values), ("dict", entries))
        return Value(union(values), UNKNOWN)

    def expr_Compare(self, node: ast.Compare, env: Env) -> Value:
        for child in [node.left, *node.comparators]:
            self.eval(child, env)
        return EMPTY.with_shape(OTHER)

    def expr_BinOp(self, node: ast.BinOp, env: Env) -> Value:
        left, right = self.eval(node.left, env), self.eval(node.right, env)
        shape = TENSOR if TENSOR in (left.shape, right.shape) else UNKNOWN
        paths = (shapes.param_paths(left.shape), shapes.param_paths(right.shape))
        if isinstance(node.op, ast.Add) and None not in paths:
            shape = ("params", paths[0] | paths[1])  # list(a.parameters()) + list(b...)
        return Value(left.graphs | right.graphs, shape)

    def expr_UnaryOp(self, node: ast.UnaryOp, env: Env) -> Value:
        operand = self.eval(node.operand, env)
        return EMPTY.with_shape(OTHER) if isinstance(node.op, ast.Not) else operand

    def expr_IfExp(self, node: ast.IfExp, env: Env) -> Value:
        self.eval(node.test, env)
        return join_values(self.eval(node.body, env), self.eval(node.orelse, env))

    def expr_NamedExpr(self, node: ast.NamedExpr, env: Env) -> Value:
        value = self.eval(node.value, env)
        self.bind(node.target, value, env)
        return value

    def expr_Lambda(self, node: ast.Lambda, env: Env) -> Value:
        return EMPTY.with_shape(OTHER)

    def expr_JoinedStr(self, node: ast.JoinedStr, env: Env) -> Value:
        for child in ast.walk(node):
            if isinstance(child, ast.FormattedValue):
                self.eval(child.value, env)
        return EMPTY.with_shape(OTHER)

    def expr_Starred(self, node: ast.Starred, env: Env) -> Value:
        return self.eval(node.value, env)

    def _comprehension(self, node, env: Env, elements: list[ast.expr]) -> Value:
        """The comprehension's value: the graphs of its last element expression (a dict
        comprehension's value, never its key)."""
        inner = dict(env)
        targets: set[str] = set()
        for generator in node.generators:
            items = self.eval(generator.iter, inner)
            item = items.with_shape(shapes.item_shape(items.shape))
            self.bind(generator.target, item, inner, write=False)
            targets |= {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
            for condition in generator.ifs:
                self.eval(condition, inner)
        values = [self.eval(e, inner) for e in elements]
        for key, value in inner.items():
            if key not in targets and key.removeprefix(self.frame.prefix) not in targets:
                env[key] = value
        result = values[-1]
        return Value(result.graphs, ("seq", result.shape if len(values) == 1 else UNKNOWN))

    def expr_ListComp(self, node: ast.ListComp, env: Env) -> Value:
        return self._comprehension(node, env, [node.elt])

    expr_SetComp = expr_GeneratorExp = expr_ListComp

    def expr_DictComp(self, node: ast.DictComp, env: Env) -> Value:
        return self._comprehension(node, env, [node.key, node.value])

    # ---------------------------------------------------------------- calls
    def expr_Call(self, node: ast.Call, env: Env) -> Value:
        func = node.func
        if isinstance(func, ast.Attribute):
            handled = self._method_call(node, func, env)
            if handled is not None:
                return handled
        qualified = self.symbols.qualify(func)
        if qualified in BACKWARD_FUNCTIONS:
            return self._functional_backward(node, qualified, env)
        return self._resolved_call(node, env)

    def _args(self, node: ast.Call, env: Env) -> tuple[list[tuple[Value, str | None]], dict]:
        positional = [(self.eval(a, env), self.key_for(a)) for a in node.args]
        keywords = {k.arg: (self.eval(k.value, env), self.key_for(k.value)) for k in node.keywords}
        return positional, keywords

    def _method_call(self, node: ast.Call, func: ast.Attribute, env: Env) -> Value | None:
        attr = func.attr
        if attr == "backward":
            loss = self.eval(func.value, env)
            self._args(node, env)
            self.backward(node, loss, _retain_flag(node), env)
            return EMPTY
        if attr in GRAPH_FREE_METHODS:
            base = self.eval(func.value, env)
            self._args(node, env)
            return EMPTY.with_shape(base.shape if attr == "detach" else OTHER)
        if attr == "detach_":
            self.eval(func.value, env)
            self.clear(func.value, env)
            return EMPTY
        if attr in ("step", "zero_grad"):
            return self._update(node, func, env)
        if attr in CONTAINER_ADDERS:
            key = self.key_for(func.value)
            if key is None:
                return None
            old = self.eval(func.value, env)
            positional, _ = self._args(node, env)
            added = [v for v, _ in positional[-1:]]
            item = added[0].shape if attr != "extend" and added else None
            env[key] = Value(old.graphs | union(added), ("seq", shapes.join(_seq_item(old), item)))
            self.note_write(key)
            return EMPTY.with_shape(NONE)
        return None

    def _update(self, node: ast.Call, func: ast.Attribute, env: Env) -> Value | None:
        """`opt.step()`, `scaler.step(opt)`, `opt.zero_grad()`, `model.zero_grad()`."""
        receiver = self.eval(func.value, env)
        shape, target = receiver.shape, func.value
        if func.attr == "step" and shape == ("scaler",) and node.args:
            target = node.args[0]
            shape = self.eval(target, env).shape
        positional, _ = self._args(node, env)
        if isinstance(shape, tuple) and shape[0] == "optimizer":
            modules = shape[1]
        elif func.attr == "zero_grad" and shapes.is_module(shape):
            path = self.module_path(target)
            modules = frozenset({path}) if path else None
        else:
            return EMPTY if shape in (("scaler",),) or _is_scheduler(shape) else None
        update_id = self._id("update", node)
        update = self.obs.updates.get(update_id)
        if update is None:
            update = self.obs.updates[update_id] = UpdateSite(
                id=update_id,
                kind=func.attr,
                call=node,
                statement=None,
                target=self.module_path(target),
                modules=modules,
                loops=tuple(self.loop_stack),
            )
        if update.statement is None and self.frame.is_top:
            update.statement, update.loops = self.top_statement, tuple(self.loop_stack)
            update.target, update.modules = self.module_path(target), modules
        if func.attr == "step" and modules:
            self._go_stale(update_id, modules, env)
        return EMPTY

    def _go_stale(self, step_id: int, modules: frozenset[str], env: Env) -> None:
        """The step changed these modules' weights in place: graphs that saved them are stale."""
        for name, value in list(env.items()):
            if any(self._owned(g.site, modules) and g.stale_by is None for g in value.graphs):
                graphs = frozenset(
                    g.go_stale(step_id) if self._owned(g.site, modules) else g for g in value.graphs
                )
                env[name] = Value(graphs, value.shape)

    def _owned(self, site: tuple[int, ...], modules: frozenset[str]) -> bool:
        return any(
            path is not None and any(path == m or path.startswith(m + ".") for m in modules)
            for path in self.obs.site_modules.get(site, ())
        )

    def _functional_backward(self, node: ast.Call, qualified: str, env: Env) -> Value:
        positional, keywords = self._args(node, env)
        first = positional[0][0] if positional else None
        first = first or keywords.get("tensors", keywords.get("outputs", (EMPTY, None)))[0]
        creates = _keyword_true(node, "create_graph")
        retain = _retain_flag(node)
        self.backward(node, first, retain, env)
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
        if kind == "module":
            return self._module_call(node, callee[1:], positional, keywords, env)
        if kind == "function":
            call = Call(callee[1], positional, keywords, None, None, ())
            return self._call_function(call, env)
        if kind == "method":
            _, info, method, receiver_key = callee
            return self._call_function(
                Call(method, positional, keywords, receiver_key, info, ()), env
            )
        if kind == "constructed":
            return EMPTY.with_shape(callee[1])
        if kind == "optimizer":
            first = positional[0][0] if positional else keywords.get("params", (EMPTY, None))[0]
            return EMPTY.with_shape(("optimizer", shapes.param_paths(first.shape)))
        if kind == "scheduler":
            optimizer = self.module_path(node.args[0]) if node.args else None
            return EMPTY.with_shape(("scheduler", optimizer))
        if kind == "chain":
            paths = [shapes.param_paths(v.shape) for v in arguments]
            known = None not in paths and paths
            return EMPTY.with_shape(("params", frozenset().union(*paths)) if known else UNKNOWN)
        if kind == "graph_free":
            return EMPTY.with_shape(callee[1])
        if kind == "receiver":
            return self.eval(func.value, env) if isinstance(func, ast.Attribute) else EMPTY
        if kind == "builtin":
            return _builtin_result(func.id, arguments) if isinstance(func, ast.Name) else EMPTY
        shape = TENSOR if kind == "torch" else UNKNOWN
        graphs = union(arguments) | receiver.graphs
        if kind == "unknown":
            graphs |= OPAQUE.graphs  # a function loopfix cannot see may return any graph
        return Value(graphs, shape)

    def _resolve(self, func: ast.expr, env: Env, call: ast.Call) -> tuple:
        if isinstance(func, ast.Name):
            return self._resolve_name(func, env, call)
        qualified = self.symbols.qualify(func)
        if qualified is not None and qualified.split(".")[0] == "torch":
            return self._resolve_torch(call, qualified)
        if qualified == "itertools.chain":
            return ("chain",)
        if not isinstance(func, ast.Attribute):
            return ("unknown",)
        key = self.key_for(func)
        if key is not None and key in env and shapes.is_module(env[key].shape):
            return ("module", env[key].shape, key)
        receiver = self._peek(func.value, env)
        info = self.symbols.module_class(receiver.shape)
        if info is not None:
            if func.attr in info.methods:
                return ("method", info, info.methods[func.attr], self.key_for(func.value))
            if func.attr in info.attributes:
                shape = self.symbols.static_shape(info.attributes[func.attr])
                if shapes.is_module(shape):
                    return ("module", shape, key)
        if shapes.is_module(receiver.shape):
            return self._module_method(func, receiver.shape)
        if receiver.shape in (None, UNKNOWN) and func.attr in self.symbols.module_evidence:
            return ("module", shapes.module("custom"), key)  # `self.model(x)`
        if func.attr in {"new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"}:
            return ("graph_free", TENSOR)
        return ("method_of",)

    def _resolve_name(self, func: ast.Name, env: Env, call: ast.Call) -> tuple:
        key = self.key_for(func)
        value = env.get(key) if key else None
        if value is not None and shapes.is_module(value.shape):
            return ("module", value.shape, key)
        unknown = value is None or value.shape in (None, UNKNOWN)
        if value is None:
            if func.id in self.symbols.functions:
                return ("function", self.symbols.functions[func.id])
            if func.id in self.symbols.classes:
                info = self.symbols.classes[func.id]
                shape = shapes.module("custom", func.id) if info.is_module else UNKNOWN
                return ("constructed", shape)
            static = self.expr_Name(func, env).shape
            if shapes.is_module(static):
                return ("module", static, key)
        qualified = self.symbols.qualify(func)
        if qualified and qualified.split(".")[0] == "torch":
            return self._resolve_torch(call, qualified)
        if qualified == "itertools.chain":
            return ("chain",)
        if func.id in BUILTINS_WITHOUT_GRAPH or func.id in _BUILTIN_SHAPERS:
            return ("builtin",)
        if unknown and func.id in self.symbols.module_evidence:
            return ("module", shapes.module("custom"), key)
        return ("unknown",)

    def _resolve_torch(self, call: ast.Call, qualified: str) -> tuple:
        name = qualified.rsplit(".", 1)[-1]
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
        shape, receiver_key = callee
        kind = shape[1]
        graphs = union([v for v, _ in positional] + [v for v, _ in keywords.values()])
        if kind.endswith("Loss") or kind in PARAMETER_FREE_MODULES:
            return Value(graphs, TENSOR)
        site = (*self.frame.site_prefix, self._id("site", node))
        func = node.func
        path = self.module_path(func.value if _calls_forward(func) else func) or receiver_key
        self.obs.site_modules.setdefault(site, set()).add(path)
        graphs |= {Graph(site)}
        info = self.symbols.module_class(shape)
        forward = info.methods.get("forward") if info is not None else None
        if forward is None:
            default = UNKNOWN if kind == "custom" else TENSOR
            return Value(graphs, shapes.RECURRENT_OUTPUT.get(kind, default))
        call = Call(forward, positional, keywords, receiver_key, info, site)
        result = self._call_function(call, env)
        return Value(graphs | result.graphs, result.shape)

    def _call_function(self, call: Call, env: Env) -> Value:
        """Run a function defined in this file on the caller's environment.

        The callee's locals live in the same environment under a prefix and are dropped on
        return; `self.x` and attributes of arguments that are caller paths write through.
        """
        function = call.function
        if function in self.call_stack:
            return EMPTY  # recursion: start from "no graph", the least fixpoint
        if self.frame.depth >= MAX_CALL_DEPTH:
            return Value(union(call.argument_values()), UNKNOWN)
        frame = self._callee_frame(call)
        self._bind_parameters(call, frame, env)
        outer_frame, outer_no_grad = self.frame, self.no_grad
        self.frame = frame
        self.no_grad = self.no_grad or _decorated_no_grad(function, self.symbols)
        self.call_stack.append(function)
        try:
            flow = self.exec_block(function.body, env)
        finally:
            self.call_stack.pop()
            self.frame, self.no_grad = outer_frame, outer_no_grad
        after = join_envs(flow.normal, flow.returns) or {}
        env.clear()
        env.update({k: v for k, v in after.items() if not k.startswith(frame.prefix)})
        returned = flow.returned
        if flow.normal is not None:
            returned = join_values(returned, EMPTY.with_shape(NONE))
        return returned or EMPTY

    def _callee_frame(self, call: Call) -> Frame:
        depth = self.frame.depth + 1
        prefix = f"#{depth}{call.function.name}:"
        self_path = call.receiver_key or f"{prefix}self"
        site_prefix = call.site or self.frame.site_prefix
        return Frame(prefix, self_path, {}, call.cls, site_prefix, depth)

    def _bind_parameters(self, call: Call, frame: Frame, env: Env) -> None:
        arguments = call.function.args
        params = [a.arg for a in arguments.posonlyargs + arguments.args]
        if call.cls is not None and params and params[0] == "self":
            params = params[1:]
        bound = list(zip(params, call.positional, strict=False)) + list(call.keywords.items())
        for name, (value, key) in bound:
            if name is None:
                continue
            env[frame.prefix + name] = value
            if key is not None:
                frame.aliases[name] = key

    # ---------------------------------------------------------------- backward
    def backward(self, node: ast.Call, loss: Value, retain: bool | None, env: Env) -> None:
        backward_id = self._id("backward", node)
        loops = tuple(self.loop_stack)
        site = self.obs.backwards.get(backward_id)
        if site is None:
            site = self.obs.backwards[backward_id] = BackwardSite(
                id=backward_id,
                call=node,
                statement=None,
                retain=retain,
                retain_keyword=_keyword(node, "retain_graph"),
                loops=loops,
            )
        if site.statement is None and self.frame.is_top:
            # first met through a call from elsewhere: its own scope is where fixes go
            site.statement, site.loops = self.top_statement, loops
        known = [g for g in loss.graphs if not g.opaque]
        if not known or len(known) < len(loss.graphs):
            self.obs.partly_unknown.add(backward_id)
        failing = {
            g
            for g in known
            if g.consumed_by is not None and g.crossed is not None and g.crossed in loops
        }
        for graph in failing:
            record = self.obs.carried.setdefault(
                (graph.crossed, graph.via), CarriedGraph(graph.crossed, graph.via)
            )
            record.consumers.add(graph.consumed_by)
            record.failing.add(backward_id)
            record.retained |= graph.retained
        signature = frozenset(g.route for g in known if g not in failing)
        self.obs.signatures[backward_id] = (
            self.obs.signatures.get(backward_id, frozenset()) | signature
        )
        reached = {g.consumed_by for g in loss.graphs if g.consumed_by is not None}
        self.obs.reached_consumers.setdefault(backward_id, set()).update(reached)
        this_iteration = [g for g in known if g not in failing]
        freed = {
            g.consumed_by for g in this_iteration if g.consumed_by is not None and not g.retained
        }
        stale = {g.stale_by for g in this_iteration if g.stale_by is not None}
        modules = set().union(*(self.obs.site_modules.get(g.site, {None}) for g in known))
        self.obs.backward_modules.setdefault(backward_id, set()).update(modules)
        if freed:
            self.obs.freed_reaches.setdefault(backward_id, set()).update(freed)
        if stale:
            self.obs.stale_reaches.setdefault(backward_id, set()).update(stale)
        keys = {g.key for g in loss.graphs}
        retained = retain is not False
        for name, value in list(env.items()):
            if any(g.key in keys and g.consumed_by is None for g in value.graphs):
                consumed = frozenset(
                    g.consume(backward_id, retained) if g.key in keys else g for g in value.graphs
                )
                env[name] = Value(consumed, value.shape)

    def _is_no_grad_context(self, node: ast.expr) -> bool:
        func = node.func if isinstance(node, ast.Call) else node
        qualified = self.symbols.qualify(func)
        if qualified in NO_GRAD_CONTEXTS:
            return True
        if qualified == "torch.set_grad_enabled" and isinstance(node, ast.Call) and node.args:
            first = node.args[0]
            return isinstance(first, ast.Constant) and first.value is False
        return False


def cross(env: Env, loop_id: int, written: set[str], enclosing: tuple[int, ...]) -> Env:
    """Relabel the graphs of every variable assigned in the loop as they cross its back-edge."""
    crossed = dict(env)
    for key in written:
        value = crossed.get(key)
        if value is not None and value.graphs:
            graphs = frozenset(g.carry(loop_id, key, enclosing) for g in value.graphs)
            crossed[key] = Value(graphs, value.shape)
    return crossed


def _calls_forward(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and func.attr == "forward"


def _is_trainer_object(shape) -> bool:
    """Optimizers and modules: values whose identity matters when kept in a container."""
    return isinstance(shape, tuple) and shape[0] in ("optimizer", "module")


def _is_scheduler(shape) -> bool:
    return isinstance(shape, tuple) and shape[0] == "scheduler"


def _is_expr(node: ast.AST) -> bool:
    return isinstance(node, ast.expr)


def _is_alias(node: ast.expr) -> bool:
    """Under no_grad, `a = b` still hands over b's tensor (and its graph)."""
    if isinstance(node, ast.Tuple | ast.List):
        return all(_is_alias(e) for e in node.elts)
    return dotted_name(node) is not None


def _item_shapes(shape, elements: list[ast.expr]) -> list:
    starred = any(isinstance(e, ast.Starred) for e in elements)
    if (
        isinstance(shape, tuple)
        and shape[0] == "tuple"
        and not starred
        and (len(shape[1]) == len(elements))
    ):
        return list(shape[1])
    return [shapes.item_shape(shape)] * len(elements)


def _seq_item(value: Value):
    shape = value.shape
    if isinstance(shape, tuple) and shape[0] == "seq":
        return shape[1]
    return None


def _keyword(node: ast.Call, name: str) -> ast.keyword | None:
    return next((k for k in node.keywords if k.arg == name), None)


def _keyword_true(node: ast.Call, name: str) -> bool:
    keyword = _keyword(node, name)
    return keyword is not None and isinstance(keyword.value, ast.Constant) and keyword.value.value


def _retain_flag(node: ast.Call) -> bool | None:
    """True / False when the call says so literally, None when it depends on a variable."""
    if _keyword_true(node, "create_graph"):
        return True
    keyword = _keyword(node, "retain_graph")
    if keyword is None:
        return False
    if isinstance(keyword.value, ast.Constant):
        return bool(keyword.value.value)
    return None


def _decorated_no_grad(function: FunctionNode, symbols: Symbols) -> bool:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if symbols.qualify(target) in NO_GRAD_CONTEXTS:
            return True
    return False


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
    "dict": lambda args: Value(union(args), UNKNOWN),
    "map": lambda args: Value(union(args), UNKNOWN),
}
