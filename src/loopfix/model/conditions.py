"""Tests a loop cannot change: every iteration takes the same side of them.

Training code tests its configuration more than once per iteration: `if args.aux:` where an
auxiliary output is computed and again where its loss is added, `if self.use_gan:` around a
discriminator's forward and around its loss. Following both sides of each `if` independently,
the loop model would read the output in an iteration that did not compute it, that is, the
previous iteration's (a graph freed by that iteration's backward). Here a test repeated in a
loop, built only from names and attributes that nothing in the loop assigns, is taken to have
one value for the whole loop: the interpreter runs the loop once with it true and once with it
false. Tests comparing one setting with constants (`self.opt.gan_type == "lsgan"` here, `in
("vanilla", "lsgan")` there) are not independent: they split the loop once per value the
tests name (`invariant_splits`). A function run as its own scope is one iteration of its
callers' loops, and splits the same way.

A call, a subscript or anything else that may change between two evaluations makes a test
not invariant, and so does anything in the loop that hands what the test reads to other
code: a method called on that object or one it belongs to (`model.train()` for
`model.training`, `self.toggle()` for `self.flag`; `self.optimizer.step()` hands over the
optimizer, not `self.flag`), the name passed or bound whole (`toggle(cfg)`, `setattr(cfg,
...)`, `alias = cfg`), or a function of the module declaring it `global`; and a store in the
loop to an attribute of that name (on any object: an alias made before the loop) or to
another attribute of the object the test reads (a property may derive from it). A name
compared with `is None` / `is not None` (`if replay is not None:`) is the exception: code
it is handed to may change the object, not make the name None, so only an assignment to it
in the loop (or `global`) counts. The methods of the loop's class it calls on `self` are
read as part of the loop, and so are, for a loop outside any class, the methods of the one
project object it calls methods on (`model.update(x)`, whose `self` the tests then read).
Changes through `exec`, `globals()` or an object holding a reference back to the one tested
are not seen.
"""

from __future__ import annotations

import ast
from collections import Counter as Tally

from loopfix.model.counters import names_assigned_in
from loopfix.model.index import BLOCK_FIELDS, syntax_key, walk
from loopfix.model.symbols import dotted_name

# at most this many invariant tests split one loop (2 ** n runs of it)
MAX_SPLIT_TESTS = 3
# at most this many runs of one loop or scope when a setting tested against several values
# splits it (`invariant_splits`): one run per value, and one for any other
MAX_SPLIT_RUNS = 24

_PURE = (
    ast.Name,
    ast.Attribute,
    ast.Constant,
    ast.Tuple,  # `args.mode in ("a", "b")`: a display of constants
    ast.List,
    ast.Set,
    ast.Compare,
    ast.BoolOp,
    ast.UnaryOp,
    ast.BinOp,
    ast.Load,
    ast.cmpop,
    ast.boolop,
    ast.unaryop,
    ast.operator,
)


def unnegated(test: ast.expr) -> tuple[object, bool]:
    """The key of a test with its `not`s taken off (its syntax, wherever it appears), and
    whether an odd number of them was taken off."""
    flipped = False
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test, flipped = test.operand, not flipped
    return syntax_key(test), flipped


def invariant_tests(
    loop: ast.For | ast.AsyncFor | ast.While,
    rebound: frozenset[str] = frozenset(),
    methods: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...] = (),
    computed: frozenset[str] | None = None,
    held: frozenset[str] = frozenset(),
) -> list[object]:
    """Keys of the tests (of `if` statements and conditional expressions) that appear at
    least twice in the loop (`not X` counts as X) and whose value nothing in the loop can
    change, each split into a true and a false run (`invariant_splits`, whose first
    `MAX_SPLIT_TESTS` dimensions they are, unless a setting tested against several values
    takes a place). `rebound`: the names some function of the module declares `global` (a
    call may rebind them). `methods`: the methods of the loop's own class that it calls on
    `self` (`self._rollout()`), read as part of the loop: their tests count, and so do their
    stores and what they hand to other code (an A3C worker's `if self.enable_lstm:` around
    the hidden state's detach in the loop and again around the LSTM's step in `_rollout`).
    `computed`: the names of the methods and properties of that class (None: not a method,
    or the class is not known); `held`: the attributes its methods store on `self`
    (`self.model = ...`)."""
    splits = invariant_splits(loop, rebound, methods, computed, held)
    return [next(iter(d[0])) for d in splits if len(d) == 2 and len(d[0]) == 1]


Assignment = dict  # test key -> the value it has in one run


class ListedValues(tuple):
    """The runs of a setting taken to be one of the values its tests list (`_listed_only`):
    no run for any other value. A conclusion that holds only on every path (LF004's "no
    later backward uses it") is not drawn where such runs are the only ones."""


def invariant_splits(
    loop: ast.AST,
    rebound: frozenset[str] = frozenset(),
    methods: tuple[ast.FunctionDef | ast.AsyncFunctionDef, ...] = (),
    computed: frozenset[str] | None = None,
    held: frozenset[str] = frozenset(),
    forwards: frozenset[str] = frozenset(),
) -> list[tuple[Assignment, ...]]:
    """How to split the runs of a loop (or of a function run as its own scope) on the tests
    it cannot change: a list of dimensions, each the assignments (test key -> value) one run
    takes, every combination of one assignment per dimension being a run.

    A repeated invariant test (`invariant_tests`) is a dimension of two runs, true and false.
    A setting compared with constants in tests repeated across the body (`if
    self.opt.gan_type == 're_avg_gan':` in one method, `elif self.opt.gan_type in ['vanilla',
    'lsgan']:` in another) is one dimension: a run per constant the tests name, and one for
    any other value, each giving every test of that setting the value Python would (the
    tests of one setting are not independent: `== 'wgan_gp'` and `== 're_avg_gan'` never
    hold together). At most `MAX_SPLIT_TESTS` dimensions, the settings' first, then in
    source order, and at most `MAX_SPLIT_RUNS` runs in all. `forwards`: the calls (by
    dotted path) of a module that another object holds (`_exposed_paths`)."""
    bodies = [loop, *methods]
    tests = [
        node.test for body in bodies for node in walk(body) if isinstance(node, ast.If | ast.IfExp)
    ]
    if len(tests) < 2:
        return []
    tally = Tally(unnegated(test)[0] for test in tests)
    assigned = set().union(*(_assigned_paths(body) for body in bodies))
    inlined = {method.name for method in methods}
    exposed = set().union(*(_exposed_paths(b, inlined, computed, held, forwards) for b in bodies))
    assigned -= _fixed_bindings(loop, bodies, assigned, exposed)

    def invariant(test: ast.expr) -> bool:
        return _invariant(test, assigned, exposed, computed, held, rebound)

    settings: dict[str, list[tuple[object, ast.Compare]]] = {}
    for test in tests:
        tested = tested_constants(test, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
        if tested is not None and isinstance(test.left, ast.Attribute):
            settings.setdefault(tested[0], []).append((syntax_key(test), test))
    candidates: list[tuple[Assignment, ...]] = []
    seen: set = set()
    for test in tests:
        key = unnegated(test)[0]
        if key in seen:
            continue
        tested = tested_constants(test, (ast.Eq, ast.NotEq, ast.In, ast.NotIn))
        subject = tested[0] if tested is not None and isinstance(test.left, ast.Attribute) else None
        group = settings.get(subject, []) if subject is not None else []
        if len(group) >= 2 and all(invariant(t) for _, t in group):
            candidates.append(_setting_runs(group, _listed_only(bodies, subject)))
            seen |= {k for k, _ in group}
        elif tally[key] >= 2 and invariant(test):
            candidates.append(({key: True}, {key: False}))
            seen.add(key)
    # a setting's tests first: its branches bind different losses (`if loss_type == 1:
    # err = ...` then `if loss_type == 2: err = ...`), where a flag's mostly move a value
    # (`if args.cuda: x = x.cuda()`); then source order
    candidates.sort(key=lambda dimension: len(dimension) == 2 and len(dimension[0]) == 1)
    dimensions: list[tuple[Assignment, ...]] = []
    runs = 1
    for dimension in candidates:
        if len(dimensions) == MAX_SPLIT_TESTS or runs * len(dimension) > MAX_SPLIT_RUNS:
            continue
        runs *= len(dimension)
        dimensions.append(dimension)
    return dimensions


def _fixed_bindings(
    loop: ast.AST, bodies: list[ast.AST], assigned: set[str], exposed: set[str]
) -> set[str]:
    """Names the loop binds, at the top of every iteration, to the same expression of what
    it cannot change (Person_reID's `return_feature = opt.arcface or opt.cosface or ...`
    before its tests `if return_feature:`): each binding is a statement of the loop's body
    itself, before any test of the name, its only binding in the loop, and the value reads
    nothing the loop assigns or hands to other code. Every test of the name then sees that
    one value."""
    found: set[str] = set()
    tested: set[str] = set()  # names a test of an earlier statement reads
    stores = Tally(
        node.id
        for body in bodies
        for node in walk(body)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del)
    )
    for statement in getattr(loop, "body", []):
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
        ):
            name, value = statement.targets[0].id, statement.value
            read = {dotted_name(n) for n in walk(value) if isinstance(n, ast.Name | ast.Attribute)}
            if (
                stores[name] == 1
                and name not in tested
                and name not in exposed
                and all(isinstance(n, _PURE) for n in walk(value))
                and None not in read
                and not any(_within_any(path, assigned | exposed) for path in read)
            ):
                found.add(name)
        for node in walk(statement):
            if isinstance(node, ast.If | ast.IfExp | ast.While):
                tested |= {n.id for n in walk(node.test) if isinstance(n, ast.Name)}
    return found


def iteration_splits(
    loop: ast.AST, rebound: frozenset[str] = frozenset()
) -> list[tuple[Assignment, ...]]:
    """The repeated tests of a `for` loop's body that read its target and that nothing in
    the body can change (Person_reID's `if opt.adv > 0 and iter % opt.aiter == 0:` where the
    adversarial output is made, and again where its loss is added): within one iteration
    every occurrence takes the same value, though the value may change from one iteration to
    the next. Each is a dimension of two runs, true and false, of every iteration (not of
    the whole loop, as `invariant_splits`' are); at most `MAX_SPLIT_TESTS`."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return []
    targets = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
    tests = [
        node.test
        for statement in loop.body
        for node in walk(statement)
        if isinstance(node, ast.If | ast.IfExp)
    ]
    tally = Tally(unnegated(test)[0] for test in tests)
    body = ast.Module(body=loop.body, type_ignores=[])  # the body without the loop's head
    # an int counter (`for step in range(n)`, `for step, batch in enumerate(loader)`) handed
    # to a call cannot be changed by it
    assigned, exposed = _assigned_paths(body), _exposed_paths(body) - _counted(loop)
    dimensions: list[tuple[Assignment, ...]] = []
    for test in tests:
        key = unnegated(test)[0]
        if tally[key] < 2 or any(key in d[0] for d in dimensions):
            continue
        reads_target = any(isinstance(n, ast.Name) and n.id in targets for n in walk(test))
        if reads_target and _invariant(test, assigned, exposed, None, frozenset(), rebound):
            dimensions.append(({key: True}, {key: False}))
        if len(dimensions) == MAX_SPLIT_TESTS:
            break
    return dimensions


def _counted(loop: ast.For | ast.AsyncFor) -> set[str]:
    """The loop's target names that hold ints: `range(...)`'s, or `enumerate(...)`'s index."""
    call = loop.iter
    name = call.func.id if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) else ""
    target = loop.target
    if name == "range" and isinstance(target, ast.Name):
        return {target.id}
    if name == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
        first = target.elts[0]
        return {first.id} if isinstance(first, ast.Name) else set()
    return set()


def _setting_runs(
    group: list[tuple[object, ast.Compare]], listed_only: bool
) -> tuple[Assignment, ...]:
    """One assignment per constant the tests of one setting name, and (unless `listed_only`)
    one for any other value: each test's value as Python computes it for that value."""
    values: list[object] = []
    for _, test in group:
        for value in _constants(test):
            if not any(v == value for v in values):  # as Python compares: 1 == 1.0 == True
                values.append(value)
    other = object()  # equal to no constant
    runs: list[Assignment] = []
    for value in [*values] if listed_only else [*values, other]:
        run = {key: _holds(test, value) for key, test in group}
        if run not in runs:  # `in ['vanilla', 'lsgan']` alone: one run for both
            runs.append(run)
    return ListedValues(runs) if listed_only else tuple(runs)


def _listed_only(bodies: list[ast.AST], subject: str) -> bool:
    """Whether the code takes the setting to be one of the values it lists: an `if` /
    `elif` chain of two tests or more of it, with no `else` (`if self.gan_type == "lsgan":
    ... elif self.gan_type == "vanilla": ...`, each branch computing the loss a later line
    uses), as `Interpreter._setting_branches` reads such a chain in a loop, or separate
    `if` statements of it that all assign one name (`_blocks_bind_one_name`)."""
    for body in bodies:
        for node in walk(body):
            if not isinstance(node, ast.If):
                continue
            chain, current = 1, node
            while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
                current, chain = current.orelse[0], chain + 1
            if chain < 2 or current.orelse:
                continue
            tests, current = [node.test], node
            while current.orelse:
                current = current.orelse[0]
                tests.append(current.test)
            tested = [tested_constants(t, (ast.Eq, ast.In)) for t in tests]
            if all(t is not None and t[0] == subject for t in tested):
                return True
        if any(_blocks_bind_one_name(block, subject) for block in _statement_lists(body)):
            return True
    return False


def _statement_lists(node: ast.AST) -> list[list[ast.stmt]]:
    """Every list of statements in `node` (bodies, `else` and `finally` blocks)."""
    found = []
    for inner in walk(node):
        for field in BLOCK_FIELDS:
            block = getattr(inner, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                found.append(block)
    return found


def _blocks_bind_one_name(statements: list[ast.stmt], subject: str) -> bool:
    """Whether `statements` hold two or more consecutive `if` statements without `else`, each
    testing `subject` against constants of its own (`if param.loss_D == 1: errG = ...`, then
    `if param.loss_D == 2: errG = ...`), that all assign one name: the code reads it after
    them, taking the setting to be one of the values they list (any other would read it
    unbound, in the first iteration)."""
    run: list[set[str]] = []
    for statement in [*statements, None]:
        tested = None
        if isinstance(statement, ast.If) and not statement.orelse:
            tested = tested_constants(statement.test, (ast.Eq, ast.In))
        if tested is not None and tested[0] == subject:
            run.append(names_assigned_in(statement))
            continue
        if len(run) >= 2 and set.intersection(*run):
            return True
        run = []
    return False


def _constants(test: ast.Compare) -> list[object]:
    right = test.comparators[0]
    items = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else [right]
    return [item.value for item in items]


def _holds(test: ast.Compare, value: object) -> bool:
    """The test's value when its subject is `value` (`==`, `!=`, `in`, `not in`)."""
    inside = any(c == value for c in _constants(test))
    return inside if isinstance(test.ops[0], ast.Eq | ast.In) else not inside


def tested_constants(
    test: ast.expr, operators: tuple = (ast.Eq, ast.In)
) -> tuple[str, frozenset] | None:
    """(`task`, {"depth"}) for `task == "depth"` or `task in ("depth", "normal")`: a name or
    an attribute path compared with constants by one of `operators`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not isinstance(test.ops[0], operators):
        return None
    right = test.comparators[0]
    if isinstance(test.ops[0], ast.In | ast.NotIn):
        constants = right.elts if isinstance(right, ast.Tuple | ast.List | ast.Set) else []
    else:
        constants = [right]
    if not constants or not all(isinstance(c, ast.Constant) for c in constants):
        return None
    subject = dotted_name(test.left)
    if subject is None:
        return None
    return subject, frozenset(c.value for c in constants)  # a set: `1 == 1.0 == True`


def _invariant(
    test: ast.expr,
    assigned: set[str],
    exposed: set[str],
    computed: frozenset[str] | None,
    held: frozenset[str] = frozenset(),
    rebound: frozenset[str] = frozenset(),
) -> bool:
    if not all(isinstance(node, _PURE) for node in walk(test)):
        return False
    if isinstance(test, ast.Constant):
        return False  # `while True:` and `if 0:` need no splitting
    # an attribute the loop sets on anything (`alias.aux = False`, `tr.step += 1`): a test
    # of that attribute on any object may read it; a test of another attribute of an object
    # the loop sets one on may too (a property), unless it is `self`'s and the class
    # computes no attribute of that name (`computed`: its methods and properties) or stores
    # it (`held`: a data attribute)
    stored = [a.rsplit(".", 1) for a in assigned if "." in a]
    stored_owners, stored_attributes = {a[0] for a in stored}, {a[1] for a in stored}
    bound_only = _none_checked_names(test)
    for node in walk(test):
        if isinstance(node, ast.Name | ast.Attribute):
            path = dotted_name(node)
            if path is None or _within_any(path, rebound):
                return False
            if id(node) not in bound_only and _within_any(path, exposed):
                return False
            if any(path == a or path.startswith(a + ".") for a in assigned):
                return False
        if isinstance(node, ast.Attribute):
            owner = path.rsplit(".", 1)[0]
            known = computed is not None or node.attr in held
            plain = owner == "self" and known and node.attr not in (computed or ())
            if node.attr in stored_attributes or (owner in stored_owners and not plain):
                return False
    return True


def _none_checked_names(test: ast.expr) -> set[int]:
    """The names `test` compares with `is None` or `is not None` (`if buffer is not None:`):
    whether a name is bound to None changes only where the name is assigned (or rebound
    through `global`), not where the object is handed to other code, which may change
    what it holds but cannot make it None."""
    found: set[int] = set()
    for node in walk(test):
        if not (isinstance(node, ast.Compare) and len(node.ops) == 1):
            continue
        if not isinstance(node.ops[0], ast.Is | ast.IsNot):
            continue
        sides = (node.left, node.comparators[0])
        for side, other in (sides, sides[::-1]):
            if isinstance(side, ast.Name) and _is_none(other):
                found.add(id(side))
    return found


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _within_any(path: str, exposed: set[str]) -> bool:
    """`path` is, or is below, an object handed to other code (`self.model` for
    `self.model.training`)."""
    return any(path == e or path.startswith(e + ".") for e in exposed)


# `nn.Module` methods that read the module without changing any attribute of it
READING_METHODS = frozenset(
    {
        *("parameters", "named_parameters", "buffers", "named_buffers", "state_dict"),
        *("children", "named_children", "modules", "named_modules"),
    }
)


# methods of `str` (immutable: calling one changes nothing) that no mutable container has:
# `self.opt.gan_type.startswith("wgan")` reads the setting, it does not hand it over
STRING_METHODS = frozenset(
    {
        *("startswith", "endswith", "lower", "upper", "casefold", "capitalize", "title"),
        *("strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "partition"),
        *("rpartition", "isdigit", "isalpha", "isalnum", "isnumeric", "isdecimal"),
        *("removeprefix", "removesuffix", "zfill", "encode", "format"),
    }
)


def _exposed_paths(
    loop: ast.AST,
    inlined: set[str] = frozenset(),
    computed: frozenset[str] | None = None,
    held: frozenset[str] = frozenset(),
    forwards: frozenset[str] = frozenset(),
) -> set[str]:
    """Objects the loop hands to code that may change them: the object a method is called on
    (`model.train()` hands over `model`, `self.optimizer.step()` hands over
    `self.optimizer`, not the rest of `self`; `self.toggle()` hands over `self`, unless
    `toggle` is one of the `inlined` methods, read as part of the loop), or a name used
    whole (`toggle(cfg)`, `setattr(cfg, ...)`, `vars(args)`, `alias = cfg`). Reading an
    attribute (`args.lr`) hands over nothing, and neither does calling an object, a module's
    forward (`model(x)`, or `self.cell(x)` where the class has no method `cell`,
    `computed`, or stores `self.cell`, `held`): a forward pass does not reconfigure its
    module; nor calling a module another object holds (`self.master.avg_model(x)`, one of
    `forwards`: the interpreter knows the class of `self.master`, which stores `avg_model`
    and has no method of that name); nor calling one of `READING_METHODS`
    (`model.parameters()`). An attribute path
    handed to a call (`update(self.opt, step)`, `setattr(self.opt, "mode", m)`), or whose
    `__dict__` a method is called on, is handed over."""
    bases: set[int] = set()  # names read only for an attribute, or tested
    exposed: set[str] = set()
    for node in walk(loop):
        if isinstance(node, ast.Attribute):
            bases.add(id(node.value))
        elif isinstance(node, ast.If | ast.IfExp | ast.While) and node is not loop:
            bases |= {id(n) for n in walk(node.test) if isinstance(n, ast.Name)}
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            path = dotted_name(node.func.value)
            if path == "self" and node.func.attr in inlined:
                continue
            if node.func.attr in READING_METHODS | STRING_METHODS:
                continue  # `clip_grad_norm_(self.acmodel.parameters(), ...)`
            if path is not None and f"{path}.{node.func.attr}" in forwards:
                continue
            if (
                path == "self"
                and node.func.attr not in (computed or ())
                and (computed is not None or node.func.attr in held)
            ):
                continue  # `self.acmodel(x)`: a module `self` holds, called (its forward)
            if path is not None:
                exposed.add(path.removesuffix(".__dict__"))  # `cfg.__dict__.update(...)`
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            bases.add(id(node.func))  # `model(x)`: called, its forward run, not handed over
        if isinstance(node, ast.FormattedValue):
            bases.add(id(node.value))  # `f"{opt}"`: formatted, not handed over
        if isinstance(node, ast.Call) and _only_reads(node):
            # `print(opt)`, `repr(opt)`, `int(opt.aiter)`: Python's own readers change nothing
            bases |= {id(a) for a in [*node.args, *(k.value for k in node.keywords)]}
        elif isinstance(node, ast.Call):
            # an attribute path handed whole (`update(self.opt, step)`, `setattr(self.opt,
            # ...)`, `vars(self.opt)`): the callee may change what it holds
            for argument in [*node.args, *(k.value for k in node.keywords)]:
                path = dotted_name(argument) if isinstance(argument, ast.Attribute) else None
                if path is not None:
                    exposed.add(path)
    for node in walk(loop):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in bases:
            exposed.add(node.id)
    return exposed


# Python builtins that read their arguments and change none of them (not `vars`, whose
# result is the object's own namespace, nor `setattr`)
READING_BUILTINS = frozenset(
    {
        *("print", "repr", "str", "format", "len", "int", "float", "bool", "round", "abs"),
        *("hasattr", "getattr", "isinstance", "issubclass", "id", "type", "hash"),
    }
)


def _only_reads(call: ast.Call) -> bool:
    """A call of one of `READING_BUILTINS` by its own name."""
    return isinstance(call.func, ast.Name) and call.func.id in READING_BUILTINS


def _assigned_paths(loop: ast.AST) -> set[str]:
    """Every name and attribute path the loop (its target included) stores to."""
    paths: set[str] = set()
    for node in walk(loop):
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
            path = dotted_name(node)
            if path is not None:
                paths.add(path)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            paths.add(node.name)
        elif isinstance(node, ast.alias):
            paths.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            paths.add(node.name)  # `except E as x`, `case (_, x)`, `case [*x]`
        elif isinstance(node, ast.MatchMapping) and node.rest:
            paths.add(node.rest)  # `case {**x}`
    return paths
