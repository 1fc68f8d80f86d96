"""Which runnable piece of a file holds a finding: parsing only (no torch, no user code)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def loop_block_line(source: str, lines: set[int]) -> int | None:
    """The line of the one loop (at the top of the module, of its `__main__` block, or of a
    function or method) that holds `lines`."""
    tree = ast.parse(source)
    found = set()
    for line in lines:
        block = block_holding(tree, line)
        for statement in block or []:
            if statement.lineno <= line <= statement.end_lineno:
                found.add(statement.lineno)
    return found.pop() if len(found) == 1 else None


def block_holding(tree: ast.Module, line: int) -> list[ast.stmt] | None:
    """The statement list whose loop (`for` or `while`) holds `line`: the module's, its
    `__main__` block's, or the body of a top-level function or method."""
    for body in runnable_bodies(tree):
        for statement in body:
            inside = statement.lineno <= line <= statement.end_lineno
            if inside and isinstance(statement, ast.For | ast.While):
                return body
    return None


def runnable_bodies(tree: ast.Module):
    """The module, its `__main__` block, and every top-level function's and method's body."""
    yield tree.body
    for statement in tree.body:
        if is_main_guard(statement) or isinstance(statement, FUNCTIONS):
            yield statement.body
        elif isinstance(statement, ast.ClassDef):
            yield from (item.body for item in statement.body if isinstance(item, FUNCTIONS))


def is_main_guard(statement: ast.stmt) -> bool:
    return (
        isinstance(statement, ast.If)
        and isinstance(statement.test, ast.Compare)
        and ast.unparse(statement.test).replace("'", '"') == '__name__ == "__main__"'
    )


def enclosing_function(text: str, line: int) -> str | None:
    """`train` or `Trainer.fit`: the top-level function or method holding `line`."""
    tree = ast.parse(text)
    for node in tree.body:
        inside = node.lineno <= line <= (node.end_lineno or node.lineno)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and inside:
            return node.name
        if isinstance(node, ast.ClassDef) and inside:
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    item.lineno <= line <= (item.end_lineno or item.lineno)
                ):
                    return f"{node.name}.{item.name}"
    return None


def is_runnable(text: str) -> bool:
    """Module-level code beyond definitions and imports, or a `__main__` block."""
    tree = ast.parse(text)
    definitions = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)
    return any(
        not isinstance(s, definitions)
        and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        for s in tree.body
    )


# -- arguments the harness builds for a function no script or fixture calls ----------------

MODULE_METHODS = {"parameters", "named_parameters", "train", "eval", "to", "zero_grad"}
STATE_METHODS = {"init_hidden", "init_state", "begin_state", "initial_state"}
LOOP_WRAPPERS = {"enumerate", "tqdm", "iter", "zip", "list"}
STATE_FACTORIES = {"zeros", "ones", "randn", "rand", "empty"}


@dataclass(frozen=True)
class Parameter:
    """A parameter the harness must supply, and the role its use in the code gives it:
    `module` / `recurrent` (called; recurrent when it takes or returns a state), `optimizer`
    (steps), `data` (a loop iterates it; `unpack` values per batch), `loss` (a called
    criterion), `options` (only its attributes are read: `args.lr`), `object` (a method of
    its own is called: `replay_buffer.sample(batch_size)`, which no stand-in can answer;
    `method` names it), or `number`."""

    name: str
    role: str
    unpack: int = 1
    keyword: bool = False
    method: str | None = None


@dataclass(frozen=True)
class StandInPlan:
    """What to build to call `call`: the instance's `__init__` parameters (methods only), the
    call's own, the recurrent kind the file uses and sizes from its literal state shapes."""

    call: str
    init: tuple[Parameter, ...] | None
    arguments: tuple[Parameter, ...]
    kind: str
    batch: int
    hidden: int

    @property
    def stands_in(self) -> bool:
        """Whether any model, optimizer, loss or data is a stand-in (level `replica`)."""
        every = [*(self.init or ()), *self.arguments]
        return any(p.role not in ("number", "data", "options") for p in every)

    @property
    def unbuildable(self) -> list[Parameter]:
        """The parameters no stand-in can be made for (role `object`)."""
        return [p for p in [*(self.init or ()), *self.arguments] if p.role == "object"]

    @property
    def needs_data(self) -> bool:
        return any(p.role == "data" for p in [*(self.init or ()), *self.arguments])


def stand_in_plan(text: str, call: str) -> StandInPlan | None:
    """How the harness would call `call` (`train` or `Trainer.fit`); None if it cannot."""
    tree = ast.parse(text)
    found = _definitions(tree, call)
    if found is None:
        return None
    function, init = found
    bodies = [function] + ([init] if init is not None else [])
    aliases = _self_aliases(init) if init is not None else {}
    init_parameters = None
    helpers = {n.name: n for n in tree.body if isinstance(n, FUNCTIONS)}
    if init is not None:
        init_parameters = tuple(_parameters(init, bodies, aliases, helpers))
    kind = re.search(r"nn\.(LSTMCell|GRUCell|RNNCell|LSTM|GRU|RNN)\b", text)
    batch, hidden = _state_sizes(bodies)
    return StandInPlan(
        call=call,
        init=init_parameters,
        arguments=tuple(_parameters(function, bodies, {}, helpers)),
        kind=kind.group(1) if kind else "GRU",
        batch=batch,
        hidden=hidden,
    )


def _definitions(tree: ast.Module, call: str):
    """The function (and, for a method, its class's `__init__`) that `call` names."""
    if "." not in call:
        functions = [n for n in tree.body if isinstance(n, FUNCTIONS) and n.name == call]
        return (functions[0], None) if functions else None
    owner, method = call.split(".", 1)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner]
    if not classes:
        return None
    members = {n.name: n for n in classes[0].body if isinstance(n, FUNCTIONS)}
    if method not in members:
        return None
    init = members.get("__init__")
    return members[method], init if init is not None else _empty_init()


def _empty_init() -> ast.FunctionDef:
    return ast.parse("def __init__(self):\n    pass").body[0]


def _self_aliases(init: ast.FunctionDef) -> dict[str, str]:
    """`self.model = model` (or `self.G, self.opt = G, opt`) in `__init__`: the method uses
    `model` as `self.model`."""
    aliases = {}
    for node in ast.walk(init):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = [(target, node.value)]
            if _same_length_tuples(target, node.value):
                pairs = list(zip(target.elts, node.value.elts, strict=True))
            for stored, value in pairs:
                if (
                    isinstance(value, ast.Name)
                    and isinstance(stored, ast.Attribute)
                    and ast.unparse(stored.value) == "self"
                ):
                    aliases[value.id] = ast.unparse(stored)
    return aliases


def _same_length_tuples(target: ast.expr, value: ast.expr) -> bool:
    return (
        isinstance(target, ast.Tuple)
        and isinstance(value, ast.Tuple)
        and len(target.elts) == len(value.elts)
    )


def _parameters(function, bodies, aliases: dict[str, str], helpers: dict) -> list[Parameter]:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    required = positional[: len(positional) - len(arguments.defaults)]
    if required and required[0].arg in ("self", "cls"):
        required = required[1:]
    keyword = [
        a for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is None
    ]
    names = [(a.arg, False) for a in required] + [(a.arg, True) for a in keyword]
    return [
        _role(name, {name, aliases.get(name, name)}, bodies, keyword, helpers)
        for name, keyword in names
    ]


def _role(name: str, spellings: set[str], bodies, keyword: bool, helpers: dict) -> Parameter:
    """The role the bodies' use of the parameter (spelt any of `spellings`) gives it; a
    parameter they only pass on to a function of the module (`push_and_pull(self.opt,
    self.lnet, x)`) takes the role that function's use of it gives (one call deep)."""
    found = _own_role(name, spellings, bodies, keyword)
    if found.role not in ("number", "options"):
        return found
    nodes = [n for body in bodies for n in ast.walk(body)]
    for helper, inner in _passed_on(spellings, nodes, helpers):
        passed = _own_role(name, {inner}, [helper], keyword)
        if passed.role not in ("number", "options"):
            return passed
    return found


def _passed_on(spellings: set[str], nodes, helpers: dict) -> list[tuple[ast.AST, str]]:
    """(function, its parameter) for each call among `nodes` of a module-level function in
    `helpers` that is given the value (by position or keyword)."""
    found = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        helper = helpers.get(node.func.id)
        if helper is None:
            continue
        parameters = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]]
        for parameter, argument in zip(parameters, node.args, strict=False):
            if ast.unparse(argument) in spellings:
                found.append((helper, parameter))
        for keyword in node.keywords:
            if keyword.arg is not None and ast.unparse(keyword.value) in spellings:
                found.append((helper, keyword.arg))
    return found


def _own_role(name: str, spellings: set[str], bodies, keyword: bool) -> Parameter:
    nodes = [n for body in bodies for n in ast.walk(body)]
    roles = set()
    unpack = 1
    own_methods: list[str] = []  # methods no stand-in has (`replay_buffer.sample(...)`)
    for node in nodes:
        method = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        if method and ast.unparse(node.func.value) in spellings:
            attribute = node.func.attr
            if attribute in ("step", "zero_grad") and "module" not in roles:
                roles.add("optimizer")
            roles |= {"module"} if attribute in MODULE_METHODS else set()
            roles |= {"recurrent"} if attribute in STATE_METHODS else set()
            if attribute not in {"step", *MODULE_METHODS, *STATE_METHODS}:
                own_methods.append(attribute)
        if isinstance(node, ast.Call) and ast.unparse(node.func) in spellings:
            roles.add("called")
            roles |= {"recurrent"} if len(node.args) >= 2 else set()
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            unpacked = isinstance(node.targets[0], ast.Tuple) and len(node.targets[0].elts) == 2
            if unpacked and ast.unparse(node.value.func) in spellings:
                roles.add("recurrent")
        if isinstance(node, ast.For) and _iterated(node.iter) in spellings:
            roles.add("data")
            unpack = _unpacked(node)
    if "data" in roles:
        return Parameter(name, "data", unpack, keyword)
    if "optimizer" in roles and "called" not in roles:
        return Parameter(name, "optimizer", keyword=keyword)
    if "called" in roles and re.search(r"loss|criterion", name, re.I):
        return Parameter(name, "loss", keyword=keyword)
    if "recurrent" in roles:
        return Parameter(name, "recurrent", keyword=keyword)
    if roles & {"called", "module"}:
        return Parameter(name, "module", keyword=keyword)
    if own_methods:
        return Parameter(name, "object", keyword=keyword, method=own_methods[0])
    if _only_attributes_read(name, nodes):
        return Parameter(name, "options", keyword=keyword)
    return Parameter(name, "number", keyword=keyword)


def _only_attributes_read(name: str, nodes: list[ast.AST]) -> bool:
    """`args.lr`, `args.epochs`, ... and nothing else: parsed command-line options."""
    uses = [n for n in nodes if isinstance(n, ast.Name) and n.id == name]
    read = {
        id(n.value)
        for n in nodes
        if isinstance(n, ast.Attribute)
        and isinstance(n.ctx, ast.Load)
        and isinstance(n.value, ast.Name)
        and n.value.id == name
    }
    return bool(uses) and all(id(use) in read for use in uses)


def _iterated(iterable: ast.expr) -> str:
    """`loader` for `loader`, `enumerate(loader)`, `tqdm(loader)`, `zip(loader, ...)`."""
    while (
        isinstance(iterable, ast.Call)
        and isinstance(iterable.func, ast.Name)
        and iterable.func.id in LOOP_WRAPPERS
        and iterable.args
    ):
        iterable = iterable.args[0]
    return ast.unparse(iterable)


def _unpacked(loop: ast.For) -> int:
    target = loop.target
    wrapped = isinstance(loop.iter, ast.Call) and ast.unparse(loop.iter.func) == "enumerate"
    if wrapped and isinstance(target, ast.Tuple) and len(target.elts) == 2:
        target = target.elts[1]
    return len(target.elts) if isinstance(target, ast.Tuple) else 1


def _state_sizes(bodies) -> tuple[int, int]:
    """(batch, hidden) from the first literal state, `torch.zeros(1, 2, 5)` or
    `model.init_hidden(2)`; 4 for each size no literal gives."""
    for body in bodies:
        for node in ast.walk(body):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            sizes = [a.value for a in node.args if isinstance(a, ast.Constant)]
            literal = len(sizes) == len(node.args) and all(type(s) is int for s in sizes)
            if node.func.attr in STATE_FACTORIES and literal and len(sizes) >= 2:
                return sizes[-2], sizes[-1]
            if node.func.attr in STATE_METHODS and literal and len(sizes) == 1:
                return sizes[0], 4
    return 4, 4
