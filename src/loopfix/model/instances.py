"""What the interpreter knows about values it did not see being made: the arguments the file's
own call sites pass to each function, and the attributes an instance of a class of the file
holds once its `__init__` (and the helpers `__init__` calls) has run.

Real training code keeps its networks and optimizers on trainer objects (`self.D = Disc()`,
`self.opt_d = Adam(self.D.parameters())`), passes them into functions
(`train(netG, netD, optG, optD, loader)`) and into constructors (`Trainer(policy, qf1)`).
A function analysed as its own scope starts from what its call sites pass (their shapes
joined, module paths renamed into the callee's parameter names); a method starts from the
instance its class builds.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loopfix.model import shapes
from loopfix.model.graphs import EMPTY, OPAQUE, PLACEHOLDER, Graph, Value
from loopfix.model.shapes import Shape

# Kinds of value that carry no autograd graph of their own: passing one in says nothing about
# graphs, so a parameter bound to one starts empty instead of opaque.
GRAPHLESS_KINDS = frozenset({"module", "modules", "optimizer", "params", "scaler", "scheduler"})


@dataclass
class CallSites:
    """Every call of a function of the file the interpreter followed, by callee: for each
    distinct call, the shape it passes to each parameter, in the callee's terms."""

    bindings: dict[int, set[tuple[tuple[str, Shape], ...]]] = field(default_factory=dict)
    # names a callee gives the items of a list it was passed (`[opt_g, opt_d] = optimizers`)
    unpacked: dict[int, set[str]] = field(default_factory=dict)
    # (function id, parameter) -> the modules, in the callee's terms, whose calls built every
    # graph a call site passed in that parameter (`latent` from `self.model(data)`); None
    # once one site passed graph of unknown origin
    origins: dict[tuple[int, str], frozenset[str] | None] = field(default_factory=dict)
    # the sites standing for those graphs when the callee runs as its own scope -> modules
    parameter_sites: dict[tuple[int, ...], set[str | None]] = field(default_factory=dict)
    _sites_of: dict[tuple[int, str], tuple[int, ...]] = field(default_factory=dict)
    # parameters some call site passed data of unknown origin in, beside the modules' graphs
    partly_opaque: set[tuple[int, str]] = field(default_factory=set)
    # class name -> (the class, its module's symbols) of the objects the call sites passed,
    # or None when two classes of that name were (`Symbols.adopt`)
    classes: dict[str, tuple[Any, Any] | None] = field(default_factory=dict)
    # the loop runs being remembered (`memo.LoopMemo`), each given every call recorded in it
    # to record again where the run is reused: what a call records depends on what the
    # analysis has seen by then (`modules_of`)
    journals: list[list[tuple]] = field(default_factory=list)
    # the functions some call is known to run with grad enabled (`runs_with_grad`): an
    # evaluation helper whose loop may keep graphs runs as a scope (`_run_scopes`)
    called_with_grad: set[int] = field(default_factory=set)

    def note_class(self, info, home) -> None:
        """An object of `info`'s class (defined in `home`) was passed at a call site. The
        first site's `home` is kept: a later one may be inside a callee of another module
        (`super().__init__(master)` in the analysed module), which does not know the class."""
        name = info.node.name
        known = self.classes.get(name, (info, home))
        self.classes[name] = known if known is not None and known[0] is info else None

    def record(
        self,
        function: ast.AST,
        bound: dict[str, tuple[Value, str | None]],
        listed: dict[str, tuple[str | None, ...]] | None = None,
        modules_of: Callable[[Value], frozenset[str | None]] | None = None,
        receiver: str | None = None,
        renames: dict[str, str] | None = None,
        with_grad: bool = False,
    ) -> None:
        """`bound`: parameter -> (argument value, the caller's key for it, if any). `listed`:
        the caller's lists built from names (key -> the items' paths): a callee that unpacks
        such a list into names at its top (`[generator, discriminator] = models`) calls the
        items by those names. `modules_of`: the caller's module paths whose calls built a
        value's graphs (None in a path: a call of unknown receiver). `receiver`: the caller's
        path of the object a method is called on (its `self`). `renames`: further caller
        paths as the callee knows them (`critic` as `agent.critic` when an object it is
        given keeps it). `with_grad`: the call runs with grad enabled (`called_with_grad`)."""
        for journal in self.journals:
            # `modules_of` is the interpreter's: the replay passes it again (kept, it would
            # make a cycle through the interpreter's memo)
            modules = modules_of is not None
            entry = (function, bound, dict(listed or {}), modules, receiver, renames, with_grad)
            journal.append(entry)
        if with_grad:
            self.called_with_grad.add(id(function))
        renames = dict(renames or {})
        renames.update(  # an optimizer too: the one a scheduler passed beside it is built on
            (key, name)
            for name, (value, key) in bound.items()
            if key is not None and (identifies(value.shape) or shapes.is_optimizer(value.shape))
        )
        for name, (_, key) in bound.items():
            items = (listed or {}).get(key) if key is not None else None
            for item, local in _unpacked_names(function, name, items):
                renames[item] = local
                self.unpacked.setdefault(id(function), set()).add(local)
        site = tuple(
            sorted(
                (name, shapes.rename_paths(value.shape, renames))
                for name, (value, _) in bound.items()
            )
        )
        self.bindings.setdefault(id(function), set()).add(site)
        origin_renames = dict(renames)
        if receiver is not None and receiver != "self":
            origin_renames[receiver] = "self"
        for name, (value, _) in bound.items():
            self._record_origin(id(function), name, value, origin_renames, modules_of)

    def _record_origin(self, function_id, name, value, renames, modules_of) -> None:
        key = (function_id, name)
        if key in self.origins and self.origins[key] is None:
            return
        if any(g.site and g.site[0] == PLACEHOLDER for g in value.graphs):
            return  # a summary being computed: its real call sites record the origins
        origin = None
        known = Value(frozenset(g for g in value.graphs if not g.opaque), value.shape)
        if modules_of is not None and known.graphs:
            # data of unknown origin beside them (a batch passed in) takes nothing away from
            # what the modules' graphs are: the parameter holds both
            paths = modules_of(known)  # None among them: a graph of modules not known
            renamed = {
                shapes.rename_paths(("params", frozenset({p})), renames)
                for p in (paths if None not in paths else ())
            }
            if None not in paths and all(r[1] for r in renamed):
                origin = frozenset().union(*(r[1] for r in renamed))
                if len(known.graphs) < len(value.graphs):
                    self.partly_opaque.add(key)
        if origin is None and not value.graphs and key not in self.origins:
            return  # no graph passed here: says nothing about where graphs come from
        earlier = self.origins.get(key) or frozenset()
        self.origins[key] = None if origin is None else earlier | origin

    def _parameter_graph(self, function_id: int, name: str, visible: set[str]) -> Value | None:
        """A parameter whose every call site passed graph built by modules the callee names
        (its own parameters, `self`'s attributes, globals): a graph of those modules, so a
        step of one of them makes it stale, as in the caller."""
        origin = self.origins.get((function_id, name))
        if not origin or any(p.split(".")[0] not in visible for p in origin):
            return None
        # one site per parameter, standing for whatever its call sites passed
        site = self._sites_of.setdefault((function_id, name), (-1000 - len(self._sites_of),))
        self.parameter_sites[site] = set(origin)
        graphs = frozenset({Graph(site)})
        if (function_id, name) in self.partly_opaque:
            graphs |= OPAQUE.graphs
        return Value(graphs, None)

    def parameter_values(self, function: ast.AST, visible: set[str]) -> dict[str, Value]:
        """Each parameter's value joined over the call sites seen; module paths the callee
        cannot name (a caller's local it was not given) make the optimizer unresolved."""
        joined: dict[str, Shape] = {}
        visible = visible | self.unpacked.get(id(function), set())
        for site in self.bindings.get(id(function), ()):
            names = {name for name, _ in site}
            for name, shape in site:
                shape = shapes.keep_paths(shape, visible | names)
                joined[name] = shapes.join(joined.get(name), shape)
        values = {name: _start_value(shape) for name, shape in joined.items()}
        for name, value in values.items():
            graph = self._parameter_graph(id(function), name, visible | set(joined))
            if graph is not None and value.graphs:
                values[name] = Value(graph.graphs, value.shape)
        return values


class Instances:
    """The attributes of instances of the file's classes, each computed once by running the
    class's `__init__` (bases of the file first) on what its construction sites pass."""

    def __init__(self, symbols, call_sites: CallSites) -> None:
        self.symbols = symbols
        self.call_sites = call_sites
        self._attributes: dict[str, dict[str, Value]] = {}
        # what the module body left in each global, once it has run (a function reading
        # `optimizer0` knows the modules it owns)
        self.module_shapes: dict[str, Shape] = {}
        self._locals: dict[int, frozenset[str]] = {}
        self._own: set[int] | None = None

    def own_functions(self) -> set[int]:
        """Ids of the analysed file's own functions and methods."""
        if self._own is None:
            symbols = self.symbols
            self._own = {id(f) for f in symbols.functions.values() if symbols.home(f) is symbols}
            for info in symbols.classes.values():
                if symbols.home(info.node) is symbols:
                    self._own |= {id(m) for m in info.methods.values()}
        return self._own

    def local_names(self, function) -> frozenset[str]:
        """`calls.local_names`, once per function of this analysis, and once per run for a
        function of a project module (remembered by the module that defines it: every file
        importing it calls it)."""
        from loopfix.model.calls import local_names

        found = self._locals.get(id(function))
        if found is None:
            home = self.symbols.home(function)
            found = home.remember(("local-names", id(function)), local_names, function)
            self._locals[id(function)] = found
        return found

    def attributes(self, info) -> dict[str, Value]:
        """Attribute name -> value (shape only: no graph) after construction; paths say
        `self.<attribute>`."""
        name = info.node.name
        if name not in self._attributes:
            self._attributes[name] = {}  # a class constructed while building itself
            self._attributes[name] = self._build(info)
        return self._attributes[name]

    def _build(self, info) -> dict[str, Value]:
        from loopfix.model.frames import Frame, Observations
        from loopfix.model.holders import HeldModules
        from loopfix.model.interpreter import Interpreter

        attributes: dict[str, Value] = {}
        for base in self.symbols.home(info.node).file_bases(info):
            attributes.update(self.attributes(base))
        # the class's own `__init__` or the one it inherits, run on an instance of this class
        # (so `self.build_model()` in a base's `__init__` is the subclass's override)
        init = self.symbols.home(info.node).method(info, "__init__")
        if init is None:
            return attributes
        symbols = self.symbols.home(init)  # its names are its own module's
        env = {"self": EMPTY.with_shape(self_shape(info))}
        env.update({f"self.{k}": v for k, v in attributes.items()})
        # the names of the class's module, and of the analysed one, whose code built the
        # object and calls its methods (`DiscLoss(opt_d)` in `main.py` for `losses.py`'s
        # class: the optimizer steps `main.py`'s `D`)
        visible = set(symbols.globals) | set(self.symbols.globals) | {"self"}
        env.update(self.call_sites.parameter_values(init, visible))
        stored = stored_parameters(init) | stored_through_super(init, symbols, info)
        frame = Frame(self_path="self", cls=info, aliases=stored)
        interpreter = Interpreter(symbols, Observations(), self)
        interpreter.frame = frame
        # `m = self.model.module` binds the attribute once: `m.enc` is `self.model.module.enc`
        interpreter.held = HeldModules(init.body)
        flow = interpreter.exec_block(init.body, env)
        for key, value in (flow.normal or env).items():
            attribute = key.removeprefix("self.")
            if key.startswith("self.") and "." not in attribute:
                if value.shape in (None, shapes.UNKNOWN):
                    attributes.pop(attribute, None)  # unknown: evidence of use decides
                else:
                    # an optimizer passed in over the `model` also passed in, kept as
                    # `self.model`: it steps `self.model` for the methods
                    shape = shapes.rename_paths(value.shape, stored)
                    attributes[attribute] = EMPTY.with_shape(shape)
        return attributes


def self_shape(info) -> Shape:
    return (
        shapes.module("custom", info.node.name)
        if info.is_module
        else shapes.instance(info.node.name)
    )


def stored_parameters(function: ast.FunctionDef) -> dict[str, str]:
    """`self.model = model` in `__init__`: the parameter names the attribute's module, so an
    optimizer built from `model.parameters()` owns `self.model`."""
    parameters = {a.arg for a in function.args.args + function.args.kwonlyargs}
    stored = {}
    for statement in function.body:
        if not isinstance(statement, ast.Assign):
            continue
        for target in statement.targets:
            for name, attribute in _stored_pairs(target, statement.value):
                if name in parameters:
                    stored.setdefault(name, f"self.{attribute}")
    return stored


def stored_through_super(init: ast.FunctionDef, symbols, info, depth: int = 0) -> dict:
    """Parameters of `init` that it hands to its base's `__init__` (`super().__init__(model,
    optimizer)`), which keeps them on `self`: parameter -> the attribute."""
    base_init = next(
        (
            symbols.method(b, "__init__")
            for b in symbols.file_bases(info)
            if symbols.method(b, "__init__") is not None
        ),
        None,
    )
    if base_init is None or depth > 4:
        return {}
    home = symbols.home(base_init)
    base_info = next((b for b in symbols.file_bases(info) if "__init__" in b.methods), None)
    kept = stored_parameters(base_init)
    if base_info is not None:
        kept |= stored_through_super(base_init, home, base_info, depth + 1)
    names = [a.arg for a in base_init.args.posonlyargs + base_init.args.args][1:]
    stored: dict[str, str] = {}
    for statement in init.body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "__init__"
            and isinstance(call.func.value, ast.Call)
            and isinstance(call.func.value.func, ast.Name)
            and call.func.value.func.id == "super"
        ):
            continue
        given = list(zip(names, call.args, strict=False))
        given += [(k.arg, k.value) for k in call.keywords if k.arg is not None]
        for parameter, argument in given:
            if isinstance(argument, ast.Name) and parameter in kept:
                stored.setdefault(argument.id, kept[parameter])
    return stored


def _stored_pairs(target: ast.expr, value: ast.expr) -> list[tuple[str, str]]:
    """(parameter, attribute) for `self.attribute = parameter`, item by item for
    `self.G, self.D = G, D`."""
    if isinstance(target, ast.Tuple | ast.List) and isinstance(value, ast.Tuple | ast.List):
        if len(target.elts) != len(value.elts):
            return []
        pairs = zip(target.elts, value.elts, strict=True)
        return [pair for t, v in pairs for pair in _stored_pairs(t, v)]
    if (
        isinstance(value, ast.Name)
        and isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    ):
        return [(value.id, target.attr)]
    return []


def _unpacked_names(function: ast.AST, parameter: str, items) -> list[tuple[str, str]]:
    """(item path, local name) for `[a, b] = parameter` among the function's first-level
    statements, when the list's items are known (`items`)."""
    if not items:
        return []
    for statement in getattr(function, "body", []):
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
            continue
        target, value = statement.targets[0], statement.value
        if not (isinstance(value, ast.Name) and value.id == parameter):
            continue
        if isinstance(target, ast.Tuple | ast.List) and len(target.elts) == len(items):
            return [
                (item, element.id)
                for item, element in zip(items, target.elts, strict=True)
                if item is not None and isinstance(element, ast.Name)
            ]
    return []


def identifies(shape: Shape) -> bool:
    """Values whose caller path names what the callee's parameter names: modules, objects."""
    return isinstance(shape, tuple) and shape[0] in ("module", "modules", "object")


def _start_value(shape: Shape) -> Value:
    if isinstance(shape, tuple) and (shape[0] in GRAPHLESS_KINDS or shape[0] == "object"):
        return EMPTY.with_shape(shape)
    return Value(OPAQUE.graphs, shape)  # data passed in: its graph is of unknown origin
