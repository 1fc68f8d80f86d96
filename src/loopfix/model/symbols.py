"""Static facts about one module: imports, classes, functions, and which names are modules.

The loop model asks these questions when a value's kind cannot be followed through the code
itself, e.g. a global `model` read inside a function, or `self.rnn` inside `forward`.
"""

from __future__ import annotations

import ast
import builtins
import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

from loopfix.model import shapes
from loopfix.model.index import TreeIndex, index_tree, walk
from loopfix.model.shapes import Shape

# Methods that only modules (never tensors) have: seeing one called on a name is evidence
# that the name holds a module even when its class is defined elsewhere.
MODULE_ONLY_METHODS = {"parameters", "named_parameters", "modules", "children", "buffers", "train"}

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

# Module methods that return the module itself (`Net().to(device)`), and calls that return the
# module they wrap (`nn.DataParallel(net)`): both keep the module's identity and forward.
MODULE_PLUMBING = frozenset(
    {"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16",
     "requires_grad_", "apply", "share_memory", "type", "to_empty"}
)  # fmt: skip
MODULE_WRAPPERS = frozenset(
    {"DataParallel", "DistributedDataParallel", "compile", "convert_sync_batchnorm"}
)


@dataclass
class ClassInfo:
    node: ast.ClassDef
    base_names: list[str]
    is_module: bool = False
    methods: dict[str, FunctionNode] = field(default_factory=dict)


@dataclass
class Symbols:
    imports: dict[str, str] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    functions: dict[str, FunctionNode] = field(default_factory=dict)
    globals: dict[str, ast.expr] = field(default_factory=dict)
    module_evidence: set[str] = field(default_factory=set)
    # project modules imported as a whole (`import utils`, `from pkg import models`)
    modules: dict[str, Symbols] = field(default_factory=dict)
    # classes, methods and functions imported from another project module -> that module's
    # symbols (its imports, globals and classes are what their bodies mean)
    homes: dict[int, Symbols] = field(default_factory=dict)
    # modules whose parameters are frozen for good (`requires_grad_(False)`, never undone):
    # calling them builds no graph of their own
    frozen: set[str] = field(default_factory=set)
    # facts about this module's classes and functions, computed once per run (a module's
    # symbols are shared by every file that imports it): (question, node id) -> answer
    facts: dict[tuple[str, int], object] = field(default_factory=dict)
    frozen_classes: set[str] = field(default_factory=set)  # classes that freeze themselves
    # classes of modules imported as a whole, by name (`m.WordLM()` makes a `WordLM`)
    module_classes: dict[str, ClassInfo] = field(default_factory=dict)
    # record types: `Losses = namedtuple("Losses", "policy q alpha")`, `class Out(NamedTuple)`
    # -> their field names, in order
    namedtuples: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # objects of a project class that another module builds once at module level and this
    # one imports by name (`from helpers import detacher`, `detacher = Detacher()` there) ->
    # their class: calling one runs its `__call__`
    instances: dict[str, ClassInfo] = field(default_factory=dict)
    tree: ast.Module | None = None
    index: TreeIndex | None = None  # the module's `index_tree`
    _whole: ModuleFacts | None = None

    def forget(self) -> None:
        """Empty every table, as a new `Symbols` starts: the analysis that made these symbols
        is over, or their module was dropped. Modules that import each other refer to each
        other (`homes`, `modules`): emptied, they are freed by reference counting alone, with
        no pass of the cyclic collector over everything still alive."""
        vars(self).update(vars(Symbols()))

    def whole_module(self) -> ModuleFacts:
        """Facts only a walk of the whole module gives, read from its index when first
        asked."""
        if self._whole is None:
            self._whole = _module_facts(self.index, self.globals)
        return self._whole

    def global_names(self) -> frozenset[str]:
        """Names some function of the module declares `global` or `nonlocal` (a call may
        rebind them)."""
        return self.whole_module().declared_global

    def int_constant(self, name: str) -> int | None:
        """The value of a module-level name bound once, to an integer literal, and stored
        nowhere else in the module (`K = 5`, `n_critic = 1`)."""
        return self.whole_module().int_constants.get(name)

    def constant(self, name: str) -> object:
        """The value of a module-level name bound once to a literal (a number, string, bool
        or None, or an item of a literal list picked by a literal index: `UPDATE =
        ['Approach0', 'Approach1'][0]`) and stored nowhere else in the module;
        `NOT_CONSTANT` for any other name. Code elsewhere may still rebind it
        (`config.MODE = ...` from another module): not seen."""
        value = self.whole_module().constants.get(name, NOT_CONSTANT)
        if value is NOT_CONSTANT or self.tree is None:
            return NOT_CONSTANT
        rebound = self.remember(("rebound names", 0), _rebound_names, self.tree)
        return NOT_CONSTANT if rebound is None or name in rebound else value

    def instance_constant(self, info: ClassInfo, attribute: str) -> object:
        """The value of an attribute that the class's `__init__` binds, in its own body, to a
        literal (`self.reset_each_step = True`), where the class's module stores to no other
        attribute of that name; `NOT_CONSTANT` otherwise. Whether the module being analysed
        sets it on an instance is `stores_attribute`'s question; code elsewhere may still
        set it (`agent.reset_each_step = False` in another module): not seen."""
        bound = self._init_binding(info, attribute)
        return NOT_CONSTANT if bound is None else literal_value(bound)

    def init_argument(self, info: ClassInfo, attribute: str) -> InitArgument | None:
        """The `__init__` parameter an attribute is bound to in the same way
        (`self.truncate = truncate`), where `__init__` binds the parameter nowhere else;
        None otherwise. Its value is what every construction passes (`constructions`)."""
        bound = self._init_binding(info, attribute)
        if not isinstance(bound, ast.Name):
            return None
        init = info.methods["__init__"]
        arguments = init.args
        positional = [a.arg for a in arguments.posonlyargs + arguments.args][1:]  # not self
        keyword_only = [a.arg for a in arguments.kwonlyargs]
        if bound.id not in (*positional, *keyword_only):
            return None
        if bound.id in self.remember(("names bound", id(init)), _names_bound, init):
            return None  # the parameter is bound again: its value is not what was passed
        defaults = dict(zip(positional[::-1], arguments.defaults[::-1], strict=False))
        defaults.update(zip(keyword_only, arguments.kw_defaults, strict=True))
        index = positional.index(bound.id) if bound.id in positional else None
        return InitArgument(bound.id, index, defaults.get(bound.id))

    def _init_binding(self, info: ClassInfo, attribute: str) -> ast.expr | None:
        """What the class's `__init__` binds `self.<attribute>` to in its own body, where the
        class's module stores to no other attribute of that name (nor to its mangled name,
        `agent._Agent__reset`); None otherwise."""
        home = self.home(info.node)
        init = info.methods.get("__init__")
        mangled = mangled_name(info.node.name, attribute)
        if init is None or home.stores_attribute(attribute) != 1:
            return None
        if mangled != attribute and home.stores_attribute(mangled) != 0:
            return None
        for statement in init.body:
            if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
                continue
            target = statement.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and target.attr == attribute
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                return statement.value
        return None

    def constructions(self, node: ast.ClassDef, argument: InitArgument) -> list | None:
        """The literal each construction of the class in this module passes for `argument`
        (a literal, or a constant of this module), or leaves to its literal default; None
        where one passes anything else, or where
        the module names the class other than to call it (a subclass, a factory table,
        `model_cls = Net`)."""
        if self.tree is None:
            return None
        names = {name for name, info in self.classes.items() if info.node is node}
        names.add(node.name)  # `models.Net(...)`, or the class's own module
        loaded, attributes = self.remember(("references", 0), _references, self.tree)
        calls = [call for name in names for call in loaded.get(name, ())]
        calls += attributes.get(node.name, [])
        passed = []
        for call in calls:
            if call is None:
                return None  # named other than to construct it
            value = argument.passed_by(call, self.constant)
            if value is NOT_CONSTANT:
                return None
            passed.append(value)
        return passed

    def stores_attribute(self, attribute: str) -> int | None:
        """How many times the module stores to (or deletes) an attribute of that name, on
        any object; None when it may set attributes by name (`setattr`, `vars`,
        `__dict__`)."""
        if self.tree is None:
            return None
        stores = self.remember(("attribute stores", 0), _attribute_stores, self.tree)
        return None if stores is None else stores.get(attribute, 0)

    def remember(self, key: tuple[str, int], compute, node: ast.AST):
        """`compute(node)`, once per `key` for this module."""
        if key not in self.facts:
            self.facts[key] = compute(node)
        return self.facts[key]

    def home(self, node: ast.AST) -> Symbols:
        """The symbols of the module that defines `node` (a class or function)."""
        return self.home_by_id(id(node))

    def home_by_id(self, node_id: int) -> Symbols:
        found = self.homes.get(node_id, self)
        return self if found is None else found

    def set_home(self, node_id: int, home: Symbols, replace: bool = True) -> None:
        """Record `home` as the module defining the node `node_id`; this module itself is
        kept as None, so that a module is never its own referent (an import cycle would
        otherwise leave each analysis's symbols in a reference cycle, which only the cyclic
        collector frees). With `replace=False` an entry already there stays."""
        if replace or node_id not in self.homes:
            self.homes[node_id] = None if home is self else home

    def linked_homes(self) -> list[Symbols]:
        """The modules `homes` names, in the order first recorded (this one for None)."""
        return [self if home is None else home for home in self.homes.values()]

    def instance_class(self, node: ast.expr) -> ClassInfo | None:
        """The class of an object another project module builds once at module level, named
        as this module imports it (`detacher`) or through its module (`helpers.detacher`)."""
        if isinstance(node, ast.Name):
            return self.instances.get(node.id)
        dotted = dotted_name(node)
        if dotted is None or "." not in dotted:
            return None
        owner, _, name = dotted.rpartition(".")
        module = self.modules.get(owner)
        return _instance_class(module, name) if module is not None else None

    def class_level_method(self, node: ast.expr) -> tuple[ClassInfo, FunctionNode, str] | None:
        """`Utils.repackage` or `helpers.Utils.repackage`: (the class, the method, "static"
        or "class") for a `staticmethod` or `classmethod` called through its class."""
        if not isinstance(node, ast.Attribute):
            return None
        owner = node.value
        if isinstance(owner, ast.Name):
            info = self.classes.get(owner.id)
        else:
            found = self.member(owner)
            info = found if isinstance(found, ClassInfo) else None
        method = self.method(info, node.attr) if info is not None else None
        kind = binding_decorator(method) if method is not None else None
        return (info, method, kind) if kind is not None else None

    def member(self, node: ast.expr) -> FunctionNode | ClassInfo | None:
        """`utils.repackage_hidden`, `models.Net`: a function or class of an imported project
        module, named through the module."""
        dotted = dotted_name(node)
        if dotted is None or "." not in dotted:
            return None
        owner, _, name = dotted.rpartition(".")
        module = self.modules.get(owner)
        if module is None:
            return None
        return module.classes.get(name) or module.functions.get(name)

    def qualify(self, node: ast.expr) -> str | None:
        """`nn.LSTM` -> `torch.nn.LSTM` when `nn` was imported from torch; None if not dotted."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        base = self.imports.get(root)
        if base is None:
            return dotted
        return f"{base}.{rest}" if rest else base

    def static_shape(self, node: ast.expr, depth: int = 0) -> Shape:
        """Shape of an expression that constructs something, without running any flow."""
        if depth > 4:
            return None
        if isinstance(node, ast.Call):
            return self._constructed_shape(node, depth)
        if isinstance(node, ast.Name) and node.id in self.globals:
            return self.static_shape(self.globals[node.id], depth + 1)
        if isinstance(node, ast.List | ast.Tuple):
            return ("modules", shapes.join_all(self.static_shape(e, depth + 1) for e in node.elts))
        if isinstance(node, ast.ListComp):
            return ("modules", self.static_shape(node.elt, depth + 1))
        return None

    def _constructed_shape(self, node: ast.Call, depth: int) -> Shape:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in MODULE_PLUMBING:
            inner = self.static_shape(func.value, depth + 1)
            return inner if shapes.is_module(inner) else None
        qualified = self.qualify(func)
        if qualified is None:
            return None
        name = qualified.rsplit(".", 1)[-1]
        if name in MODULE_WRAPPERS and qualified.startswith("torch.") and node.args:
            return self.static_shape(node.args[0], depth + 1)
        if name in self.classes and "." not in qualified:
            info = self.classes[name]
            return shapes.module("custom", name) if info.is_module else None
        if qualified.startswith("torch.nn.") and name[:1].isupper():
            if name == "ModuleList" and node.args:
                return ("modules", shapes.item_shape(self.static_shape(node.args[0], depth + 1)))
            return shapes.module(name)
        return None

    def module_class(self, shape: Shape) -> ClassInfo | None:
        if shapes.is_module(shape) and shape[2] is not None:
            return self.class_named(shape[2])
        return None

    def class_of(self, shape: Shape) -> ClassInfo | None:
        """The file's class a module or object value is an instance of."""
        name = shapes.class_name(shape)
        return self.class_named(name) if name is not None else None

    def class_named(self, name: str) -> ClassInfo | None:
        return self.classes.get(name) or self.module_classes.get(name)

    def adopt(self, info: ClassInfo, home: Symbols) -> None:
        """A class of another project module whose objects the modules calling into this one
        pass it (`Trainer(agent, ...)` in `main.py`, `Agent` from `agent.py`, which this
        module does not import): its methods are followed where those objects are used. A
        name this module binds keeps its own meaning."""
        name = info.node.name
        if self.class_named(name) is not None or name in self.globals:
            return
        self.module_classes[name] = info
        self.set_home(id(info.node), home.home(info.node), replace=False)
        for method in info.methods.values():
            self.set_home(id(method), home.home(method), replace=False)

    def file_bases(self, info: ClassInfo) -> list[ClassInfo]:
        """The class's bases defined in the project: in its module, imported by name, or
        named through an imported module (`base.Trainer`)."""
        home = self.home(info.node)
        bases = []
        for name in info.base_names:
            found = home.classes.get(name) if "." not in name else None
            if found is None and "." in name:
                owner, _, attr = name.rpartition(".")
                module = home.modules.get(owner)
                found = module.classes.get(attr) if module is not None else None
            if found is not None and found is not info:
                bases.append(found)
        return bases

    def stateless_forward(self, info: ClassInfo) -> frozenset[str] | None:
        """The settings of `self` the class's `forward` reads, when it is a function of its
        arguments and of those settings alone (None otherwise): it reads nothing else of
        `self` (no parameter, submodule or other attribute), the class creates no parameter
        and derives from `nn.Module` itself. Calling such a module (DeepRL's `DummyBody`,
        whose forward returns its input) builds no graph of its own, as long as what its
        constructor was given for those settings holds none (the caller checks the
        instance: `Margin(margin=nn.Parameter(...))` holds a weight). A setting the module
        assigns to an instance from outside the class (`crit.margin = m`) is none."""
        if any(name not in PLAIN_MODULE_BASES for name in info.base_names):
            return None
        forward = info.methods.get("forward")
        if forward is None or not forward.args.args or "__call__" in info.methods:
            return None
        if self.whole_module().registers_hooks:  # a hook may add what the forward does not
            return None
        libraries = {  # `torch`, `F`, `np`: names of libraries, which hold no weights of ours
            name
            for name, target in self.imports.items()
            if target.split(".")[0] in WEIGHTLESS_LIBRARIES
        }
        outside = (
            self.remember(("stored outside classes", id(self.tree)), _stored_outside, self.tree)
            if self.tree is not None
            else frozenset()
        )
        return self.remember(
            ("stateless_forward", id(info.node)),
            lambda node: _reads_no_self(node, forward, libraries, outside),
            info.node,
        )

    def returns_own_parameter(self, info: ClassInfo) -> bool:
        """Whether the class's `forward` only hands back a parameter its `__init__` made
        (`return self.weight` of `self.weight = nn.Parameter(...)`: neural style transfer's
        generated image, a learned prompt): the call's result is that leaf, which keeps
        nothing for the backward; stepping it changes no graph built from the call."""
        return self.remember(
            ("returns own parameter", id(info.node)),
            lambda node: _returns_own_parameter(node, self),
            info.node,
        )

    def class_attributes(self, info: ClassInfo) -> tuple[frozenset[str] | None, frozenset[str]]:
        """For the class, its bases' included: the names of its methods and properties (None
        when a base is not known: a library class may compute any attribute), and the
        attributes its methods store on `self` (`self.model = ...`, data attributes)."""
        names: set[str] | None = set()
        held: set[str] = set()
        bases, seen = [info], set()
        while bases:
            current = bases.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            home = self.home(current.node)
            held |= home.remember(
                ("stored on self", id(current.node)), _stored_on_self, current.node
            )
            known = self.file_bases(current)
            if names is not None:
                names |= set(current.methods)
                if len(known) < len([b for b in current.base_names if b not in PLAIN_BASES]):
                    names = None  # a base from a library may compute anything
            bases += known
        return (frozenset(names) if names is not None else None), frozenset(held)

    def method(self, info: ClassInfo, name: str, depth: int = 0) -> FunctionNode | None:
        """`name` as the class or one of its bases in the file defines it."""
        if name in info.methods:
            return info.methods[name]
        for base in self.file_bases(info) if depth < 8 else []:
            found = self.method(base, name, depth + 1)
            if found is not None:
                return found
        return None


@dataclass(frozen=True)
class ModuleFacts:
    """What one walk of a whole module tells."""

    int_constants: dict[str, int]  # see `Symbols.int_constant`
    constants: dict[str, object]  # see `Symbols.constant`
    declared_global: frozenset[str]  # names a `global` or `nonlocal` statement declares
    registers_hooks: bool  # a forward (pre-)hook is registered on some module


PLAIN_MODULE_BASES = ("nn.Module", "Module", "torch.nn.Module")
PLAIN_BASES = frozenset({*PLAIN_MODULE_BASES, "object", ""})  # no attribute of their own
# libraries whose names a pass-through forward may use (`F.relu`, `torch.clamp`, `np.sqrt`)
WEIGHTLESS_LIBRARIES = frozenset({"torch", "numpy", "math", "einops", "operator", "functools"})
FORWARD_HOOKS = frozenset(
    {"register_forward_hook", "register_forward_pre_hook", "register_module_forward_hook",
     "register_module_forward_pre_hook",
     # parametrizations compute a module's parameter from another on every access
     "register_parametrization", "weight_norm", "spectral_norm", "orthogonal"}
)  # fmt: skip
SAFE_BUILTINS = frozenset(dir(builtins))
PARAMETER_CLASSES = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
PARAMETER_MAKERS = ("Parameter", "ParameterList", "ParameterDict", "register_parameter")


def _stored_on_self(node: ast.ClassDef) -> frozenset[str]:
    """The attributes the class's methods store on `self` (`self.model = ...`)."""
    return frozenset(
        target.attr
        for target in walk(node)
        if isinstance(target, ast.Attribute)
        and isinstance(target.ctx, ast.Store)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    )


def mangled_name(class_name: str, attribute: str) -> str:
    """The name Python stores `self.__x` under in the body of class `class_name`
    (`_Agent__x`); other names as they are."""
    if attribute.startswith("__") and not attribute.endswith("__"):
        return f"_{class_name.lstrip('_')}{attribute}"
    return attribute


def _attribute_stores(tree: ast.Module) -> dict[str, int] | None:
    """attribute name -> the stores and deletions of an attribute of that name in the
    module; None when the module may set attributes by name."""
    stores: dict[str, int] = {}
    for node in walk(tree):
        if isinstance(node, ast.Name) and node.id in NAMESPACE_WRITERS:
            return None
        if isinstance(node, ast.Attribute):
            if node.attr in ("__dict__", "__setattr__"):  # `object.__setattr__(agent, ...)`
                return None
            if not isinstance(node.ctx, ast.Load):
                stores[node.attr] = stores.get(node.attr, 0) + 1
    return stores


def _stored_outside(tree: ast.Module) -> frozenset[str]:
    """The attribute names the module's code outside its classes stores to (`crit.margin =
    m`): on an instance, such an attribute is no setting its class alone decides."""
    inside = {id(n) for c in walk(tree) if isinstance(c, ast.ClassDef) for n in walk(c)}
    return frozenset(
        n.attr
        for n in walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and id(n) not in inside
    )


def _returns_own_parameter(node: ast.ClassDef, symbols: Symbols) -> bool:
    methods = {
        m.name: m for m in node.body if isinstance(m, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    forward, init = methods.get("forward"), methods.get("__init__")
    if forward is None or init is None or not forward.args.args or not init.args.args:
        return False
    body = forward.body[1:] if ast.get_docstring(forward) is not None else forward.body
    returned = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    me = forward.args.args[0].arg
    if not (
        isinstance(returned, ast.Attribute)
        and isinstance(returned.value, ast.Name)
        and returned.value.id == me
    ):
        return False
    built = [
        statement.value
        for statement in walk(init)
        if isinstance(statement, ast.Assign)
        and any(
            isinstance(t, ast.Attribute)
            and isinstance(t.value, ast.Name)
            and t.value.id == init.args.args[0].arg
            and t.attr == returned.attr
            for t in statement.targets
        )
    ]
    return len(built) == 1 and (
        isinstance(built[0], ast.Call) and symbols.qualify(built[0].func) in PARAMETER_CLASSES
    )


def _reads_no_self(
    node: ast.ClassDef,
    forward: FunctionNode,
    libraries: set[str],
    outside: frozenset[str] = frozenset(),
) -> frozenset[str] | None:
    """The settings of `self` the `forward` of class `node` reads (`_plain_settings`, less
    those stored from outside the class), when it reads nothing else of `self` and no name
    of the module but library ones (`torch`, `F`): a global parameter, a module (imported
    from the project too) or a helper may hold weights. None otherwise."""
    arguments = forward.args
    own = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    own |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
    own |= {
        n.id for n in walk(forward) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    }
    me = arguments.args[0].arg
    settings = _plain_settings(node) - outside
    read = {  # `self.temperature`: a setting, which holds no weight
        id(n.value): n.attr
        for n in walk(forward)
        if isinstance(n, ast.Attribute)
        and isinstance(n.value, ast.Name)
        and n.value.id == me
        and isinstance(n.ctx, ast.Load)
        and n.attr in settings
    }
    for name in (n for n in walk(forward) if isinstance(n, ast.Name)):
        if name.id == me and id(name) not in read:
            return None
        if name.id not in own and name.id not in libraries and name.id not in SAFE_BUILTINS:
            return None
    outside_class = forward not in node.body  # `forward = _forward` in the class body
    for inner in (*walk(node), *(walk(forward) if outside_class else ())):
        if isinstance(inner, ast.Call):
            name = dotted_name(inner.func) or ""
            if name.rpartition(".")[2] in PARAMETER_MAKERS:
                return None
    return frozenset(read.values())


PLAIN_ANNOTATIONS = frozenset({"int", "float", "bool", "str"})


def parameter_defaults(arguments: ast.arguments) -> list[tuple[ast.arg, ast.expr | None]]:
    """Each named parameter (positional, then keyword-only) with its default expression,
    None where it has none."""
    positional = arguments.posonlyargs + arguments.args
    defaults = [None] * (len(positional) - len(arguments.defaults)) + arguments.defaults
    return [
        *zip(positional, defaults, strict=True),
        *zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True),
    ]


def _plain_settings(node: ast.ClassDef) -> set[str]:
    """Attributes the class binds only to plain values: number, string, bool or None
    literals, or `__init__` parameters annotated `int`, `float`, `bool` or `str` (`Optional`
    of one) or defaulting to a number, string or bool (`self.temperature = temperature`,
    with `temperature: float = 0.1`; a `None` default says nothing of what is passed).
    `self.training` is `nn.Module`'s own flag."""
    init = next((m for m in node.body if getattr(m, "name", "") == "__init__"), None)
    plain_parameters: set[str] = set()
    if isinstance(init, ast.FunctionDef):
        plain_parameters = {
            argument.arg
            for argument, default in parameter_defaults(init.args)
            if (_plain_literal(default) and default.value is not None)  # `None`: anything later
            or _plain_annotation(argument.annotation)
        }
    bound: dict[str, bool] = {"training": True}
    for statement in walk(node):
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                value = statement.value
                plain = _plain_literal(value) or (
                    isinstance(value, ast.Name) and value.id in plain_parameters
                )
                bound[target.attr] = bound.get(target.attr, True) and plain
        if isinstance(statement, ast.AugAssign | ast.AnnAssign):
            target = statement.target
            if isinstance(target, ast.Attribute):
                bound[target.attr] = False
    return {name for name, plain in bound.items() if plain}


def _plain_literal(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and (
        node.value is None or type(node.value) in (int, float, bool, str)
    )


def _plain_annotation(node: ast.expr | None) -> bool:
    """`float`, `Optional[float]`, `float | None`."""
    if isinstance(node, ast.Name):
        return node.id in PLAIN_ANNOTATIONS
    optional = ("Optional", "typing.Optional")
    if isinstance(node, ast.Subscript) and dotted_name(node.value) in optional:
        return _plain_annotation(node.slice)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        sides = (node.left, node.right)
        return any(_plain_annotation(n) for n in sides) and all(
            _plain_annotation(n) or (isinstance(n, ast.Constant) and n.value is None) for n in sides
        )
    return False


def parameters_of(node: ast.expr | None) -> ast.expr | None:
    """`X` for `X.parameters()` or `list(X.parameters())` (the module whose parameters an
    argument lists: an optimizer's, a clipping's, a backward's `inputs=`); None otherwise."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "list"
        and len(node.args) == 1
        and not node.keywords
    ):
        node = node.args[0]
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "parameters"
        and not node.args
    ):
        return node.func.value
    return None


def dotted_name(node: ast.expr) -> str | None:
    """`a.b.c` for a name or a chain of attributes of a name; None for anything else."""
    kind = type(node)
    if kind is ast.Name:  # most calls: the interpreter asks for every name it evaluates
        return node.id
    if kind is not ast.Attribute:
        return None
    try:  # kept on the node: a parsed tree is not changed (see `index.walk`)
        return node._loopfix_dotted
    except AttributeError:
        pass
    parts, inner = [], node
    while isinstance(inner, ast.Attribute):
        parts.append(inner.attr)
        inner = inner.value
    dotted = ".".join([inner.id, *reversed(parts)]) if isinstance(inner, ast.Name) else None
    node._loopfix_dotted = dotted
    return dotted


def root_name(node: ast.expr) -> str | None:
    """`state` for `state`, `state.d_iters`, `counts["d"]`, `budget.pop(...)`, `*rest`."""
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call | ast.Starred):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def project_callees(
    func: ast.expr, symbols: Symbols, constructors: bool = False
) -> list[FunctionNode]:
    """The project functions a call of `func` may run: the function it names (`helper`,
    `utils.helper`), or for `obj.name(...)` each method `name` of the classes the module
    sees; with `constructors`, a class named (`Net()`, `models.Net()`) gives its
    `__init__`."""
    name = dotted_name(func) or ""
    if name and "." not in name:
        found: FunctionNode | ClassInfo | None = symbols.functions.get(name)
        if found is None and constructors:
            found = symbols.class_named(name)
    else:
        found = symbols.member(func) if name else None
    if isinstance(found, ClassInfo):
        init = found.methods.get("__init__") if constructors else None
        return [init] if init is not None else []
    if found is not None:
        return [found]
    if isinstance(func, ast.Attribute):
        classes = [*symbols.classes.values(), *symbols.module_classes.values()]
        return [info.methods[func.attr] for info in classes if func.attr in info.methods]
    return []


def collect_symbols(
    tree: ast.Module,
    index: TreeIndex | None = None,
    resolver: Callable[[str | None, int], Symbols | None] | None = None,
    into: Symbols | None = None,
) -> Symbols:
    """The module's symbols; with a `resolver` (see `loopfix.project`), what it imports from
    the project's own modules is linked in (`into`: fill this object, which an import cycle
    may already hold)."""
    index = index or index_tree(tree)
    symbols = into if into is not None else Symbols()
    made: dict[int, ClassInfo] = {}  # class statement id -> its info, made once
    if resolver is not None:
        if into is not None:
            # an import cycle may come back to this module while its imports are being
            # linked: its own classes and functions are there already, so what the other
            # module links does not depend on which file of the run reached the cycle first
            for statement in tree.body:
                _collect_definitions(symbols, statement, made)
        for node in index.imports:
            _link_import(symbols, node, resolver)
    for node in index.imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    symbols.imports[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    symbols.imports[root] = root
        elif node.module and node.level == 0:
            for alias in node.names:
                symbols.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                if alias.name == "*" and node.module in STAR_EXPANDED:
                    own = _own_bindings(tree, index)  # the module's own binding wins
                    for name in _star_names(node.module):
                        if name not in own:
                            symbols.imports[name] = f"{node.module}.{name}"
    _note_multiprocessing_contexts(symbols, index)
    for node in index.attribute_calls:
        if node.func.attr in MODULE_ONLY_METHODS:
            receiver = node.func.value
            name = receiver.attr if isinstance(receiver, ast.Attribute) else None
            name = receiver.id if isinstance(receiver, ast.Name) else name
            if name:
                symbols.module_evidence.add(name)
    for node in index.recurrent_calls:
        name = dotted_name(node.func)
        if name:
            symbols.module_evidence.add(name.rpartition(".")[2])
    symbols.tree, symbols.index = tree, index
    for statement in tree.body:
        _collect_top_level(symbols, statement, made)
        fields = _namedtuple_fields(statement)
        if fields is not None:
            symbols.namedtuples[fields[0]] = fields[1]
    for info in made.values():
        _adopt_assigned_methods(info, symbols)
    _link_aliases(symbols)
    foreign = {
        name: function
        for name, function in symbols.functions.items()
        if symbols.home(function) is not symbols
    }
    imported = {  # freezing helpers imported from the project (`from utils import freeze`)
        name
        for name, function in foreign.items()
        if symbols.home(function).remember(
            ("freezes", id(function)), _freezes_first_parameter, function
        )
    }
    factories = {  # and functions returning a module they froze (`load_backbone()`)
        name
        for name, function in foreign.items()
        if symbols.home(function).remember(
            ("returns frozen", id(function)), _returns_frozen, function
        )
    }
    thawing = {  # and unfreezing helpers (`from utils import unfreeze`, `set_trainable`)
        name
        for name, function in foreign.items()
        if function.name in _module_thawing_helpers(symbols.home(function))
    }
    if imported or factories or any(FREEZING & words for words in index.words.values()):
        symbols.frozen, symbols.frozen_classes = _frozen_modules(
            tree, imported, index, factories, thawing
        )
        frozen_any = symbols.frozen or symbols.frozen_classes
        if frozen_any and _thaws_unseen(symbols, tree, index):
            symbols.frozen, symbols.frozen_classes = set(), set()
    _resolve_module_classes(symbols)
    return symbols


FREEZING = frozenset({"requires_grad", "requires_grad_"})


def _frozen_modules(
    tree: ast.Module,
    imported_helpers: set[str] = frozenset(),
    index: TreeIndex | None = None,
    imported_factories: set[str] = frozenset(),
    imported_thawing: set[str] = frozenset(),
) -> tuple[set[str], set[str]]:
    """(module paths, class names) frozen for good: modules frozen by `m.requires_grad_(False)`
    or `for p in m.parameters(): p.requires_grad = False` (or `p.requires_grad_(False)`),
    directly or through a function that does it to its first parameter (`freeze(backbone)`),
    built frozen (`nn.GRUCell(4, 8).requires_grad_(False)`) or by a function that returns a
    module it froze (`backbone = load_backbone()`), and never unfrozen anywhere in the file (a
    GAN that freezes D only for G's update unfreezes it: not frozen); classes whose `__init__`
    freezes `self`, while nothing in the file thaws anything (a submodule of one of their
    instances may be what is thawed). A function that unfreezes its first parameter
    (`unfreeze(backbone)` after warm-up epochs, in the file or imported) thaws what it is
    given."""
    helpers = _freezing_helpers(tree, index) | imported_helpers
    thawing = _thawing_helpers(tree, index) | imported_thawing
    factories = _frozen_factories(tree, index) | imported_factories
    frozen, thawed, classes = set(), set(), set()
    says = _says(index, tree, FREEZING | helpers | factories | thawing)
    for statement in tree.body:
        defines = isinstance(statement, ast.FunctionDef)
        if defines and statement.name in helpers | factories | thawing:
            continue  # what they freeze or unfreeze is read at their calls
        if not says(statement):
            continue  # names neither `requires_grad` nor a freezing helper: nothing to read
        if isinstance(statement, ast.ClassDef):
            init = next((f for f in statement.body if getattr(f, "name", "") == "__init__"), None)
            if init is not None and _freezes_itself(init):
                classes.add(statement.name)
        more, less = _frozen_modules_in(statement)
        frozen |= more - {"self"}
        thawed |= less
        for node in walk(statement):
            if isinstance(node, ast.Assign) and _built_frozen(node.value, factories):
                frozen |= {dotted_name(t) for t in node.targets if dotted_name(t) is not None}
        for node in walk(statement) if thawing else ():
            if _calls(node, thawing):  # `unfreeze(backbone)`, `set_trainable(enc, epoch > 2)`
                arguments = [*node.args, *(k.value for k in node.keywords)]
                thawed |= {dotted_name(a) for a in arguments if dotted_name(a) is not None}
        for node in walk(statement) if helpers else ():
            if _calls(node, helpers) and node.args and dotted_name(node.args[0]) is not None:
                frozen.add(dotted_name(node.args[0]))  # `freeze(backbone)`
            elif isinstance(node, ast.Assign) and _calls(node.value, helpers):
                # `backbone = freeze(build_backbone())`
                frozen |= {dotted_name(t) for t in node.targets if dotted_name(t) is not None}
    related = {t for t in thawed if any(shapes.within(t, f) or shapes.within(f, t) for f in frozen)}
    if thawed - related:
        # a module unfrozen that may hold a frozen one under another name (`whole =
        # nn.Sequential(encoder, head)`, then `whole`'s parameters unfrozen)
        return set(), set()
    paths = {
        f for f in frozen if not any(shapes.within(t, f) or shapes.within(f, t) for t in thawed)
    }
    # a name bound again may hold another module later (`encoder = copy.deepcopy(teacher)`)
    stores = index.stores if index is not None else {}
    paths = {f for f in paths if f.startswith("self.") or stores.get(f.partition(".")[0], 1) <= 1}
    return paths, set() if thawed else classes


def _says(index: TreeIndex | None, tree: ast.Module, words: set[str]):
    """A test for whether a top-level statement mentions one of `words`, from the index's
    words of each scope (a function's include its nested functions'; the methods of a class
    are scopes of their own, and the rest of its body counts as the module's); without an
    index, every statement may."""
    if index is None:
        return lambda statement: True
    module_says = bool(index.words.get(id(tree), set()) & words)
    return functools.partial(_scope_says, index, words, module_says)


def _scope_says(index: TreeIndex, words: set[str], module_says: bool, node: ast.AST) -> bool:
    """`_says`'s test (a function of the module, not a nested one: one that calls itself is
    a reference cycle, and this one would keep the whole tree alive until the cyclic
    collector runs)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return bool(index.words.get(id(node), set()) & words)
    if isinstance(node, ast.ClassDef):
        return module_says or any(_scope_says(index, words, module_says, s) for s in node.body)
    return module_says


def _calls(node: ast.AST, functions: set[str]) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions
    )


def _freezing_helpers(tree: ast.Module, index: TreeIndex | None = None) -> set[str]:
    """Module-level functions that freeze their first parameter and nothing else."""
    return _requires_grad_functions(tree, index, _freezes_first_parameter)


def _requires_grad_functions(tree: ast.Module, index: TreeIndex | None, test) -> set[str]:
    """The names of the module-level functions that pass `test`, read only where the index
    says the function mentions `requires_grad` (most modules have none)."""
    return {
        function.name
        for function in tree.body
        if isinstance(function, ast.FunctionDef)
        and (index is None or index.words.get(id(function), FREEZING) & FREEZING)
        and test(function)
    }


def _thawing_helpers(tree: ast.Module, index: TreeIndex | None = None) -> set[str]:
    """Module-level functions that may unfreeze what they are given: they set
    `requires_grad` to anything but a literal False (`_may_thaw`: `unfreeze(m)`,
    `set_trainable(m, flag)`), or call such a function of the module by name
    (`def unfreeze(m): set_requires_grad(m, True)`)."""
    found = _requires_grad_functions(tree, index, _may_thaw)
    functions = [f for f in tree.body if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)]
    return named_closure({f.name: _function_words(f, index) for f in functions}, found)


def named_closure(bodies: dict[str, set[str]], found: set[str]) -> set[str]:
    """`found` and the names (`bodies`: name -> the words its body says) whose body says one
    of them, transitively: the functions that call, by name, one that does something."""
    found = set(found)
    while True:
        grown = {name for name, words in bodies.items() if words & found} - found
        if not grown:
            return found
        found |= grown


def _function_words(function: FunctionNode, index: TreeIndex | None) -> set[str]:
    if index is not None and id(function) in index.words:
        return index.words[id(function)]
    return {n.id for n in walk(function) if isinstance(n, ast.Name)}


def _module_thawing_helpers(home: Symbols) -> frozenset[str]:
    """`_thawing_helpers` of a project module, once per module for the run."""
    key = ("thawing helpers", 0)
    if key not in home.facts:
        tree = home.tree
        home.facts[key] = frozenset(_thawing_helpers(tree, home.index) if tree else ())
    return home.facts[key]


def _may_thaw(scope: ast.AST) -> bool:
    """Whether `scope` may set `requires_grad` to anything but a literal False:
    `x.requires_grad_()`, `x.requires_grad_(flag)`, `x.requires_grad = flag`, or
    `setattr(x, "requires_grad", ...)` (or an attribute named by a variable)."""
    return any(_thaws(node) for node in walk(scope))


def _thaws(node: ast.AST) -> bool:
    if isinstance(node, ast.Assign):
        targets = node.targets
        named = any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in targets)
        return named and not _is_false(node.value)
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_":
        return not (node.args and _is_false(node.args[0]))
    if isinstance(node.func, ast.Name) and node.func.id == "setattr" and len(node.args) == 3:
        name, value = node.args[1], node.args[2]
        if not isinstance(name, ast.Constant):
            return True  # any attribute, `requires_grad` among them
        return name.value == "requires_grad" and not _is_false(value)
    return False


def _thaws_unseen(symbols: Symbols, tree: ast.Module, index: TreeIndex | None) -> bool:
    """Whether something may unfreeze a module where `_frozen_modules` cannot tell which:
    `setattr(p, "requires_grad", True)` in the module's own code, a call of an unfreezing
    helper given no module by name, or a method of one of the module's classes (its own or
    imported) that may set `requires_grad` (`unfreezer.step(epoch)` of a gradual unfreezer
    built on the encoder). Freezing is then not taken as for good anywhere in the module."""
    thawing = set(_thawing_helpers(tree, index))
    thawing |= {
        name
        for name, function in symbols.functions.items()
        if symbols.home(function) is not symbols
        and function.name in _module_thawing_helpers(symbols.home(function))
    }
    called = {id(n.func) for n in walk(tree) if isinstance(n, ast.Call)}
    for node in walk(tree):
        if _calls(node, thawing):
            arguments = [*node.args, *(k.value for k in node.keywords)]
            if not any(dotted_name(a) is not None for a in arguments):
                return True
        elif isinstance(node, ast.Call) and _names_setattr(node) and _thaws(node):
            return True
        elif isinstance(node, ast.Name) and node.id in thawing and id(node) not in called:
            return True  # handed on: `encoder.apply(thaw)`, `partial(set_flag, flag=True)`
    if _unattributed_thaw(tree, thawing, set(symbols.imports)):
        return True
    if _uses_foreign_thawing(symbols, tree, index):
        return True  # callbacks, a callable object, an unfreezing function calling another
    for info in [*symbols.classes.values(), *symbols.module_classes.values()]:
        home = symbols.home(info.node)
        key = ("class may thaw", id(info.node))
        if home.remember(key, _class_may_thaw, info.node):
            return True
    return False


def _uses_foreign_thawing(symbols: Symbols, tree: ast.Module, index: TreeIndex | None) -> bool:
    """Whether the module uses a function, class or object of another project module that
    may set `requires_grad` back (`_thawing_names` of that module): a factory of callbacks
    that unfreeze (`build_callbacks(encoder)`), a callable object (`thaw = Thaw()`), a
    helper calling an unfreezing helper of a third module."""
    used = index.words.get(id(tree), set()) if index is not None else None
    entities = [
        *symbols.functions.items(),
        *((name, info.node) for name, info in symbols.classes.items()),
        *((name, info.node) for name, info in symbols.instances.items()),
    ]
    for name, node in entities:
        home = symbols.home(node)
        if home is symbols or (used is not None and name not in used):
            continue
        if node.name in _thawing_names(home):
            return True
    return False


def _thawing_names(home: Symbols) -> frozenset[str]:
    """The module's functions and classes that may set `requires_grad` back (`_may_thaw`),
    those naming one of them, and the names it imports that another project module's
    `_thawing_names` holds (`from layers import set_rg`), once per module for the run."""
    key = ("thawing names", 0)
    if key in home.facts:
        return home.facts[key]
    home.facts[key] = frozenset()  # an import cycle comes back to an empty answer
    tree = home.tree
    if tree is None:
        return frozenset()
    top = [
        n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    ]
    found = {n.name for n in top if _may_thaw(n)}
    for name, node in [*home.functions.items(), *((n, i.node) for n, i in home.classes.items())]:
        other = home.home(node)
        if other is not home and node.name in _thawing_names(other):
            found.add(name)
    words = {n.name: _function_words(n, home.index) for n in top}
    home.facts[key] = frozenset(named_closure(words, found))
    return home.facts[key]


def _unattributed_thaw(tree: ast.Module, helpers: set[str], imported: set[str]) -> bool:
    """Whether the module may set `requires_grad` back on something other than a module it
    names: every statement that may (`_thaws`) must act on a module path of the module's own
    names (`encoder.requires_grad_(True)`, `for p in encoder.parameters(): p.requires_grad =
    True`) or be in one of its unfreezing helpers (`helpers`, whose calls name what they
    unfreeze); one on a name a loop, a comprehension, a lambda or a function binds (`for m
    in [encoder]: m.requires_grad_(True)`, `model.apply(lambda m: m.requires_grad_(True))`,
    a loop over `optimizer.param_groups`), on a class (`nn.Module.requires_grad_(encoder,
    True)`), or the attribute named by a string or handed on as a value (`getattr(p,
    "requires_grad_")(True)`, `partial(encoder.requires_grad_, True)`) is not."""
    local = _locally_bound_names(tree, helpers)
    owners = _parameter_loop_owners(tree)
    for node in walk(tree):
        if isinstance(node, ast.Constant) and node.value in FREEZING:
            return True  # `getattr(p, "requires_grad_")`, `methodcaller("requires_grad_")`
        if not _thaws(node) or id(node) in local.skipped:
            handed = isinstance(node, ast.Attribute) and node.attr == "requires_grad_"
            if handed and id(node) not in local.called:
                return True  # handed on as a value: `partial(enc.requires_grad_, True)`
            continue
        if isinstance(node, ast.Call) and _names_setattr(node):
            return True
        if isinstance(node, ast.Assign):
            named = [t for t in node.targets if isinstance(t, ast.Attribute)]
            target = named[0].value if named else node.targets[0]
        else:
            target = node.func.value
        root = (dotted_name(target) or "").partition(".")[0]
        if not root or root in imported:
            return True
        if root in local.names and owners.get(root) in (None, *local.names):
            return True
    return False


@dataclass
class _LocalNames:
    names: set[str]  # bound by loops, comprehensions, lambdas and functions (not helpers)
    skipped: set[int]  # the nodes inside the unfreezing helpers
    called: set[int]  # `x.requires_grad_` attributes that are what a call calls


def _locally_bound_names(tree: ast.Module, helpers: set[str]) -> _LocalNames:
    found = _LocalNames(set(), set(), set())
    for node in walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in helpers:
            found.skipped |= {id(n) for n in walk(node)}
        elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
            found.names |= {n.id for n in walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda | ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            every = arguments.posonlyargs + arguments.args + arguments.kwonlyargs
            found.names |= {a.arg for a in every if a.arg != "self"}
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            found.called.add(id(node.func))
    return found


def _parameter_loop_owners(tree: ast.Module) -> dict[str, str | None]:
    """The name each `for p in X.parameters():` loop binds -> the root of `X`."""
    owners: dict[str, str | None] = {}
    for node in walk(tree):
        if isinstance(node, ast.For) and _iterates_parameters(node.iter):
            owner = (dotted_name(node.iter.func.value) or "").partition(".")[0] or None
            for name in walk(node.target):
                if isinstance(name, ast.Name):
                    owners[name.id] = owner
    return owners


def mode_changes_unseen(symbols: Symbols) -> bool:
    """Whether a module may be put back in training mode where the model cannot tell which:
    in the module's code or in another project module whose functions, classes or objects
    it uses, `X.train()` (or `X.eval()`) on a name a loop, a lambda, a comprehension or a
    function binds (a helper `def f(m): m.train()`, `for m in models: m.train()`,
    `model.apply(lambda m: m.train())`), through a class (`nn.Module.train(model)`), or a
    store to a module's `training` (`model.training = True`, `setattr(m, "training", ...)`).
    An `eval()` seen before a loop then does not decide `if not self.training:` in it."""
    key = ("mode changes unseen", 0)
    if key not in symbols.facts:
        symbols.facts[key] = False  # an import cycle comes back to this answer
        homes = {id(symbols): symbols}
        entities = [
            *symbols.functions.values(),
            *(info.node for info in symbols.classes.values()),
            *(info.node for info in symbols.instances.values()),
        ]
        homes.update((id(symbols.home(node)), symbols.home(node)) for node in entities)
        own = symbols.tree is not None and symbols.remember(
            ("unattributed mode change", 0), _unattributed_mode_change, symbols.tree
        )
        # in another module, any mode change: what it is called on there is not followed
        symbols.facts[key] = own or any(
            home.tree is not None and home.remember(("mode change", 0), _changes_mode, home.tree)
            for home in homes.values()
            if home is not symbols
        )
    return symbols.facts[key]


def _changes_mode(tree: ast.Module) -> bool:
    """Whether the module calls `train()` or `eval()` on anything, or stores `training`."""
    for node in walk(tree):
        called = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        if called and node.func.attr in ("train", "eval"):
            return True
        stored = isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
        if stored and node.attr == "training":
            return True
    return False


def _unattributed_mode_change(tree: ast.Module) -> bool:
    local = _locally_bound_names(tree, set())
    for node in walk(tree):
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == "training" for t in targets):
                return True
        elif isinstance(node, ast.Call) and _names_setattr(node) and len(node.args) >= 2:
            name = node.args[1]
            if not isinstance(name, ast.Constant) or name.value == "training":
                return True
        elif isinstance(node, ast.Attribute) and node.attr in ("train", "eval"):
            root = (dotted_name(node.value) or "").partition(".")[0]
            if id(node) not in local.called or not root or root in local.names:
                return True  # handed on, or on a name bound by a loop, a lambda, a function
            if root[:1].isupper() or root in ("nn", "torch"):
                return True  # through the class: `nn.Module.train(model)`
    return False


def _names_setattr(node: ast.Call) -> bool:
    return isinstance(node.func, ast.Name) and node.func.id == "setattr"


def _class_may_thaw(node: ast.ClassDef) -> bool:
    """A method of the class, other than `__init__`, may set `requires_grad`
    (`_may_thaw`)."""
    return any(
        _may_thaw(method)
        for method in node.body
        if isinstance(method, ast.FunctionDef | ast.AsyncFunctionDef) and method.name != "__init__"
    )


def _is_true(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _freezes_itself(init: FunctionNode) -> bool:
    """`__init__` freezes `self`, or each attribute it builds by a call (an echo state
    network's reservoir: `self.rnn = nn.RNN(...)`, then its parameters frozen)."""
    frozen, _ = _frozen_modules_in(init)
    if "self" in frozen:
        return True
    built = {
        dotted_name(target)
        for node in walk(init)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        for target in node.targets
        if isinstance(target, ast.Attribute) and dotted_name(target.value) == "self"
    }
    return bool(built) and built <= frozen


def _frozen_factories(tree: ast.Module, index: TreeIndex | None = None) -> set[str]:
    """Module-level functions that return a module they froze (`_returns_frozen`)."""
    return _requires_grad_functions(tree, index, _returns_frozen)


def _returns_frozen(function: FunctionNode) -> bool:
    """`def load_backbone(): net = ...; for p in net.parameters(): p.requires_grad = False;
    return net.eval()`: every `return` gives a local module the function froze, and it thaws
    nothing."""
    frozen, thawed = _frozen_modules_in(function)
    returns = [n for n in walk(function) if isinstance(n, ast.Return)]
    if thawed or not frozen or not returns:
        return False
    return all(
        r.value is not None
        and (_unwrapped_name(r.value) in frozen or _built_frozen(r.value, set()))
        for r in returns
    )


# methods that hand back the module they are called on (`net.eval()`, `net.to(device)`)
SAME_MODULE_METHODS = frozenset({"eval", "train", "to", "cuda", "cpu", "float", "half", "double"})


def _unwrapped(node: ast.expr) -> ast.expr:
    """`net` in `net.eval().to(device)`."""
    while (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in SAME_MODULE_METHODS
    ):
        node = node.func.value
    return node


def _unwrapped_name(node: ast.expr) -> str | None:
    return dotted_name(_unwrapped(node))


def _built_frozen(value: ast.expr, factories: set[str]) -> bool:
    """`nn.GRUCell(4, 8).requires_grad_(False)` (maybe `.eval()` after), or a call of a
    function that returns a module it froze."""
    value = _unwrapped(value)
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr == "requires_grad_":
        return _is_false(value.args[0] if value.args else None)
    return _calls(value, factories)


def _freezes_first_parameter(function: FunctionNode) -> bool:
    """Whether the function freezes its first parameter and nothing else (the names a
    `for p in module.parameters():` loop binds, frozen one by one, are that module's)."""
    if not function.args.args:
        return False
    frozen, thawed = _frozen_modules_in(function)
    return not thawed and frozen - _parameter_loop_names(function) == {function.args.args[0].arg}


def _parameter_loop_names(scope: ast.AST) -> set[str]:
    """The names `for p in m.parameters():` (or `for name, p in m.named_parameters():`)
    loops in `scope` bind."""
    return {
        name.id
        for node in walk(scope)
        if isinstance(node, ast.For) and _iterates_parameters(node.iter)
        for name in walk(node.target)
        if isinstance(name, ast.Name)
    }


def _frozen_modules_in(scope: ast.AST) -> tuple[set[str], set[str]]:
    frozen, thawed = set(), set()
    for node in walk(scope):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "requires_grad_"
        ):
            target = dotted_name(node.func.value)
            if target is not None:
                (frozen if _is_false(node.args[0] if node.args else None) else thawed).add(target)
        elif isinstance(node, ast.For) and _iterates_parameters(node.iter):
            owner = dotted_name(node.iter.func.value)
            for flag in _requires_grad_settings(node):
                (frozen if _is_false(flag) else thawed).add(owner)
    return frozen, thawed


def _iterates_parameters(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("parameters", "named_parameters")
        and dotted_name(node.func.value) is not None
    )


def _requires_grad_settings(loop: ast.For) -> list[ast.expr | None]:
    """What the loop body sets `p.requires_grad` to (`p.requires_grad_(flag)` included)."""
    flags: list[ast.expr | None] = []
    for node in walk(loop):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in node.targets
        ):
            flags.append(node.value)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "requires_grad_"
        ):
            flags.append(node.args[0] if node.args else None)
    return flags


def _is_false(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


# standard-library modules whose star import binds names the model knows (`from itertools
# import *`, then `optim.Adam(chain(G.parameters(), D.parameters()))`): what they bind is read
# from the module itself, which imports nothing heavy and runs no user code; a star import of
# any other module outside the project binds names loopfix cannot know
STAR_EXPANDED = frozenset({"itertools", "functools", "collections", "copy", "typing"})
# the modules whose `get_context(method)` returns a context with the module's own API
MULTIPROCESSING_MODULES = frozenset({"multiprocessing", "torch.multiprocessing"})


def _note_multiprocessing_contexts(symbols: Symbols, index: TreeIndex) -> None:
    """`mp = _mp.get_context("spawn")`: a multiprocessing context has its module's API
    (`mp.Process(target=train, ...)`, `mp.Queue()`), so the name qualifies as the module
    does, when every binding of it in the module is such a call on one module
    (Super-mario-bros-A3C's `train`)."""
    sources: dict[str, list[str]] = {}  # name -> the module of each of its bindings
    for node in index.context_bindings:
        qualified = symbols.qualify(node.value.func) or ""  # `torch.multiprocessing.get_context`
        sources.setdefault(node.targets[0].id, []).append(qualified.rpartition(".")[0])
    for name, modules in sources.items():
        one = set(modules)
        if (
            len(one) == 1
            and one <= MULTIPROCESSING_MODULES
            and index.stores.get(name) == len(modules)
        ):
            symbols.imports[name] = modules[0]


def _own_bindings(tree: ast.Module, index: TreeIndex) -> set[str]:
    """Names the module binds itself, anywhere: assignments, parameters, functions, classes."""
    classes = {node.name for node in walk(tree) if isinstance(node, ast.ClassDef)}
    return set(index.stores) | set(index.names) | classes


@functools.cache
def _star_names(module: str) -> tuple[str, ...]:
    """The names `from <module> import *` binds: its `__all__`, else its public names."""
    loaded = importlib.import_module(module)
    names = getattr(loaded, "__all__", None)
    if names is None:
        names = [name for name in vars(loaded) if not name.startswith("_")]
    return tuple(names)


def _link_import(symbols: Symbols, node: ast.Import | ast.ImportFrom, resolver) -> None:
    """Link the names an import binds to the project module that defines them."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            module = resolver(alias.name, 0)
            if module is not None:
                _link_module(symbols, alias.asname or alias.name, module)
        return
    module = resolver(node.module, node.level)
    for alias in node.names:
        if module is not None and alias.name == "*":
            for name in [*module.classes, *module.functions]:
                if not name.startswith("_"):
                    _link_member(symbols, module, name, name)
            continue
        local = alias.asname or alias.name
        if module is not None and _link_member(symbols, module, alias.name, local):
            continue
        dotted = f"{node.module}.{alias.name}" if node.module else alias.name
        submodule = resolver(dotted, node.level)
        if submodule is not None:  # `from pkg import models`
            _link_module(symbols, local, submodule)


def _link_module(symbols: Symbols, name: str, module: Symbols) -> None:
    """`import utils`: `utils.f` and `utils.Net` are the module's, and so are their bodies."""
    symbols.modules[name] = module
    for class_name, info in module.classes.items():
        symbols.module_classes.setdefault(class_name, info)
        for node in (info.node, *info.methods.values()):
            symbols.set_home(id(node), module.home_by_id(id(node)), replace=False)
    for function in module.functions.values():
        symbols.set_home(id(function), module.home(function), replace=False)


NAMEDTUPLE_FACTORIES = frozenset(
    {"namedtuple", "collections.namedtuple", "NamedTuple", "typing.NamedTuple"}
)


def _namedtuple_fields(statement: ast.stmt) -> tuple[str, tuple[str, ...]] | None:
    """(name, field names) of a record type the statement defines at module level:
    `Losses = namedtuple("Losses", "a b")` (or a list of names, or `NamedTuple("L", [("a",
    T)])`), or `class Losses(NamedTuple):` with annotated fields."""
    if isinstance(statement, ast.ClassDef):
        if not any(dotted_name(b) in NAMEDTUPLE_FACTORIES for b in statement.bases):
            return None
        fields = tuple(
            s.target.id
            for s in statement.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        )
        return statement.name, fields
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(statement.value, ast.Call)
        and dotted_name(statement.value.func) in NAMEDTUPLE_FACTORIES
        and len(statement.value.args) >= 2
    ):
        return None
    given = statement.value.args[1]
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        fields = tuple(given.value.replace(",", " ").split())
    elif isinstance(given, ast.List | ast.Tuple):
        names = [e.elts[0] if isinstance(e, ast.Tuple) and e.elts else e for e in given.elts]
        if not all(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in names):
            return None
        fields = tuple(n.value for n in names)
    else:
        return None
    if not all(f.isidentifier() for f in fields):
        return None
    return statement.targets[0].id, fields


def _instance_class(module: Symbols, name: str) -> ClassInfo | None:
    """The class of `module`'s global `name` when the module binds it once, at module level,
    to a construction of one of its classes (`detacher = Detacher()`)."""
    value = module.globals.get(name)
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
        return None
    if module.index is None or module.index.stores.get(name) != 1:
        return None
    return module.classes.get(value.func.id)


def binding_decorator(method: FunctionNode) -> str | None:
    """ "static" or "class" for a method decorated `staticmethod` or `classmethod`."""
    for decorator in method.decorator_list:
        if isinstance(decorator, ast.Name) and decorator.id in ("staticmethod", "classmethod"):
            return decorator.id.removesuffix("method")
    return None


def _link_aliases(symbols: Symbols) -> None:
    """Module-level names bound once to a function of the module (`detach_all = repackage`)
    or to a `staticmethod` through its class (`repackage = StateUtils.repackage`): calling
    the name runs that function, here and in the modules importing it."""
    stores = symbols.index.stores if symbols.index is not None else {}
    for name, value in list(symbols.globals.items()):
        if name in symbols.functions or name in symbols.classes or stores.get(name) != 1:
            continue
        function = None
        if isinstance(value, ast.Name):
            function = symbols.functions.get(value.id)
        elif isinstance(value, ast.Attribute):
            found = symbols.class_level_method(value)
            function = found[1] if found is not None and found[2] == "static" else None
        if function is not None:
            symbols.functions[name] = function


def _link_member(symbols: Symbols, module: Symbols, name: str, local: str) -> bool:
    if name in module.namedtuples:
        symbols.namedtuples[local] = module.namedtuples[name]
    instance = _instance_class(module, name)
    if instance is not None:
        symbols.instances[local] = instance
        for node in (instance.node, *instance.methods.values()):
            symbols.set_home(id(node), module.home_by_id(id(node)), replace=False)
        return True
    info = module.classes.get(name)
    if info is not None:
        symbols.classes[local] = info
        home = module.home(info.node)
        for node in (info.node, *info.methods.values()):
            symbols.set_home(id(node), home if id(node) not in module.homes else module.home(node))
        return True
    function = module.functions.get(name)
    if function is not None:
        symbols.functions[local] = function
        symbols.set_home(id(function), module.home(function))
        return True
    return False


def _collect_definitions(symbols: Symbols, statement: ast.stmt, made: dict) -> None:
    """The module's own `def` and `class` statements (`_collect_top_level` collects them
    again after the imports, with the same objects: a definition wins over an import of
    the same name, as it does when the module runs top to bottom)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        symbols.functions[statement.name] = statement
    elif isinstance(statement, ast.ClassDef):
        symbols.classes[statement.name] = _made_class_info(statement, made)
    elif isinstance(statement, ast.If | ast.With | ast.Try):
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                _collect_definitions(symbols, child, made)


def _made_class_info(statement: ast.ClassDef, made: dict) -> ClassInfo:
    if id(statement) not in made:
        made[id(statement)] = _class_info(statement)
    return made[id(statement)]


def _collect_top_level(symbols: Symbols, statement: ast.stmt, made: dict) -> None:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        symbols.functions[statement.name] = statement
    elif isinstance(statement, ast.ClassDef):
        symbols.classes[statement.name] = _made_class_info(statement, made)
    elif isinstance(statement, ast.Assign):
        for target in statement.targets:
            if isinstance(target, ast.Name):
                symbols.globals[target.id] = statement.value
                if isinstance(statement.value, ast.Lambda):  # `detach_all = lambda hs: ...`
                    symbols.functions[target.id] = _as_function(target.id, statement.value)
    elif isinstance(statement, ast.If | ast.With | ast.Try):
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                _collect_top_level(symbols, child, made)


def _module_facts(index: TreeIndex | None, bound: dict[str, ast.expr]) -> ModuleFacts:
    if index is None:
        return ModuleFacts({}, {}, frozenset(), False)
    constants = {
        name: literal
        for name, value in bound.items()
        if index.stores.get(name) == 1 and (literal := literal_value(value)) is not NOT_CONSTANT
    }
    integers = {
        name: value.value
        for name, value in bound.items()
        if isinstance(value, ast.Constant) and type(value.value) is int and name in constants
    }
    # every attribute and name the module mentions is among some scope's words
    hooks = any(not FORWARD_HOOKS.isdisjoint(words) for words in index.words.values())
    return ModuleFacts(integers, constants, frozenset(index.declared_global), hooks)


NOT_CONSTANT = object()  # `Symbols.constant` of a name without one known value
# names through which code may write any of its module's globals
NAMESPACE_WRITERS = frozenset({"globals", "vars", "locals", "exec", "eval", "setattr"})


def _rebound_names(tree: ast.Module) -> frozenset[str] | None:
    """The names the module binds other than by assignment (an import, a `def` or `class`, a
    `match` capture) or lets a function rebind (`global`); None when any global may be
    written by name (`from settings import *`, `globals()`, `vars()`, `exec`, `setattr` on
    `sys.modules[...]`, `import __main__`)."""
    names: set[str] = set()
    for node in walk(tree):
        if _writes_any_global(node):
            return None
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.MatchAs | ast.MatchStar | ast.MatchMapping):
            bound = node.rest if isinstance(node, ast.MatchMapping) else node.name
            names.update([bound] if bound else [])
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
    return frozenset(names)


def _writes_any_global(node: ast.AST) -> bool:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return any(alias.name in ("*", "__main__") for alias in node.names)
    if isinstance(node, ast.Name):
        return node.id in NAMESPACE_WRITERS
    return isinstance(node, ast.Attribute) and node.attr in ("modules", "__dict__")


LITERAL_TYPES = (int, float, str, bool, type(None))


@dataclass(frozen=True)
class InitArgument:
    """An `__init__` parameter a setting of `self` is bound to: its name, its position
    after `self` (None: keyword-only) and its default (None: none)."""

    name: str
    position: int | None
    default: ast.expr | None

    def passed_by(self, call: ast.Call, constant=None) -> object:
        """The literal `call` passes for it (or, given `constant`, the calling module's
        `Symbols.constant`, the value of a module constant it passes: `ImagePool(num_pool)`
        with `num_pool = 50`), or its literal default; `NOT_CONSTANT` when not a literal,
        or not known (`*args`, `**kwargs`)."""
        if any(isinstance(a, ast.Starred) for a in call.args):
            return NOT_CONSTANT
        passed = None
        for keyword in call.keywords:
            if keyword.arg is None:
                return NOT_CONSTANT
            if keyword.arg == self.name:
                passed = keyword.value
        if passed is None and self.position is not None and self.position < len(call.args):
            passed = call.args[self.position]
        if passed is None:
            return literal_value(self.default) if self.default is not None else NOT_CONSTANT
        if isinstance(passed, ast.Name) and constant is not None:
            return constant(passed.id)
        return literal_value(passed)


def literal_value(node: ast.expr) -> object:
    """The value of a literal (`"detach"`, `0.5`, `True`, `None`) or of a literal list's item
    at a literal index (`['Approach0', 'Approach1'][0]`); `NOT_CONSTANT` otherwise."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, LITERAL_TYPES) else NOT_CONSTANT
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.List | ast.Tuple)):
        return NOT_CONSTANT
    index = literal_value(node.slice)
    items = node.value.elts
    if type(index) is not int or not -len(items) <= index < len(items):
        return NOT_CONSTANT
    return literal_value(items[index])


def _as_function(name: str, node: ast.Lambda) -> ast.FunctionDef:
    """A module-level lambda as the function it is: followed into when called."""
    body = ast.copy_location(ast.Return(node.body), node.body)
    function = ast.FunctionDef(
        name=name, args=node.args, body=[body], decorator_list=[], returns=None, type_params=[]
    )
    return ast.copy_location(function, node)  # every node below it comes from the parse


def _adopt_assigned_methods(info: ClassInfo, symbols: Symbols) -> None:
    """A function of the module bound to a name in the class body (`forward = _forward`, as
    torchrl's tutorials write a loss module) is that method, as Python makes it one; a
    `def` of the same name in the class body wins."""
    for item in info.node.body:
        if not (isinstance(item, ast.Assign) and isinstance(item.value, ast.Name)):
            continue
        function = symbols.functions.get(item.value.id)
        if function is None:
            continue
        for target in item.targets:
            if isinstance(target, ast.Name) and target.id not in info.methods:
                info.methods[target.id] = function


def _class_info(node: ast.ClassDef) -> ClassInfo:
    info = ClassInfo(node=node, base_names=[dotted_name(b) or "" for b in node.bases])
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            info.methods[item.name] = item
    return info


def _resolve_module_classes(symbols: Symbols) -> None:
    changed = True
    while changed:
        changed = False
        for info in symbols.classes.values():
            if info.is_module:
                continue
            for base in info.base_names:
                root = base.split(".")[0]
                qualified = symbols.imports.get(root, root) + base[len(root) :]
                in_file = symbols.classes.get(base)
                if (
                    qualified in {"torch.nn.Module", "torch.nn.modules.module.Module"}
                    or base.endswith("Module")
                    or (in_file is not None and in_file.is_module)
                ):
                    info.is_module = True
                    changed = True
                    break


def _references(tree: ast.Module) -> tuple[dict[str, list], dict[str, list]]:
    """Each name the module loads and each attribute it names, with, for each time it
    appears, the call it is the callee of (None where it is not called)."""
    calls = {id(n.func): n for n in walk(tree) if isinstance(n, ast.Call)}
    loaded: dict[str, list] = {}
    attributes: dict[str, list] = {}
    for node in walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loaded.setdefault(node.id, []).append(calls.get(id(node)))
        elif isinstance(node, ast.Attribute):
            attributes.setdefault(node.attr, []).append(calls.get(id(node)))
    return loaded, attributes


def _names_bound(node: ast.AST) -> set[str]:
    """The names `node` binds (or deletes) anywhere inside it."""
    return {n.id for n in walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
