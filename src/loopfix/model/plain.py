"""Plain calls: a call of a project function that only moves plain data, answered from an
earlier run of that function in the same context instead of running the body again.

Real repositories call their configuration and bookkeeping helpers from everywhere: fairseq's
`override_module_args(args)` and `_override_attr(...)`, argument-parser and checkpoint-path
helpers are followed from every trainer, task and entry script that imports them, and each
call ran the whole body (its loops to their fixpoints, the helpers it calls) again. Their
bodies hold loops, comprehensions and stores into local dicts, which a summary computed on
placeholder arguments cannot take (`summaries._ruled_out`: a loop's fixpoint relabels the
graphs it carries). Where no graph is carried at all there is nothing to relabel: the body
is run once on the call's own arguments, and what it did is applied at every later call of
that function with the same context, in this analysis and in the others of the run (`RUNS`).

A call is tried when:
- the function is a module-level function (a method reads its object's state), and it and
  the project functions it may call (`symbols.project_callees`, four calls deep) declare no
  `global`, yield nothing, define no class, construct no object of a project class (what
  its instances hold depends on the analysis: `Instances`), call no parameter and name no
  backward, step or gradient (`_closure`);
- every argument holds no graph but the opaque one (data of unknown origin) in a plain
  shape (`plain_shape`: tensors without graph, numbers, strings, `None`, unknown values, and
  containers of them; no module, optimizer, parameters or project object), no key of the
  environment lies under a path passed as an argument (`args.lr` set by the caller) and no
  argument is a list the caller built from names;
- every global name the function or those callees read holds such a value (a guard,
  checked again at each later call).

The run on the call's arguments must then build no graph, record nothing in the
observations but the writes of its own frames' keys, change no key outside its locals and
no part of the interpreter's state (`memo.interpreter_state`, the loop memo's snapshot) but
what running the body changes the same way each time: the calls it records
(`CallSites.journals`), the ids given to its nodes (`Interpreter.id_journals`), the ranks of
the calls it makes (`Interpreter.rank_journals`, kept relative to the call's site prefix),
and entries under its own frames' keys in the scope's tables. Its returned value must be
plain. A function whose run fails this is not tried again in the run (`NOT_PLAIN`).

The context key is the summary's (`summaries._context_key`) plus how each argument is named
(by a name, a path or a callee's local, and whether the environment holds it: a write into
a parameter reaches the caller's variable by that path), the entries earlier calls left in
the scope's tables under the keys of the frames a call from here runs in (the first call's
run leaves some, so the second call is a context of its own), whether an iterable is being
read, and the scope's element names and leaves. Applying a run gives its nodes their ids
and ranks its calls again as running would (a rank that would differ, because calls ranked
before at those places differ, means the body runs), records its calls, adds its table
entries and notes its writes. A run whose keys name a loop id (`#iterable3_0`: ids are given
per interpreter) or that records a call of the function itself is kept by its interpreter
only.

`LoopModel.plain_counts()` gives the runs computed and the calls they served. With
`LOOPFIX_CHECK_SUMMARIES=1` every application also runs the body, from the same state, and
raises `SummaryMismatch` if the value, the environment, the writes, the calls recorded, the
ranks or the tables differ; `LOOPFIX_SUMMARIES=0` turns plain calls off with the summaries.
"""

from __future__ import annotations

import ast
import dataclasses
import re
import weakref
from collections import Counter
from dataclasses import dataclass, field

from loopfix.model import memo, shapes
from loopfix.model.frames import Call, Observations
from loopfix.model.graphs import OPAQUE, Value
from loopfix.model.index import walk
from loopfix.model.symbols import ClassInfo, dotted_name, project_callees

MAX_DEPTH = 4  # calls followed from the function when collecting its callees
MAX_FUNCTIONS = 64  # functions in that closure; a larger one is not tried
# names that say autograd work: a function naming one is not plain
NOT_PLAIN_NAMES = frozenset({"backward", "manual_backward", "step", "zero_grad", "grad"})
# a generator, a name declared global, a class defined inside
NOT_PLAIN_NODES = (ast.Global, ast.Nonlocal, ast.Yield, ast.YieldFrom, ast.ClassDef)
FAILED = object()


@dataclass(frozen=True)
class PlainRun:
    returned: Value  # what the body returned (no graph, a plain shape)
    written: frozenset[str]  # the callee's local keys it wrote
    # the calls its body recorded, to record again (`memo._record_again`); the call itself
    # is recorded afresh at each call (its arguments' keys are the caller's)
    calls: tuple[tuple, ...]
    ranks: tuple[tuple, ...]  # the calls it ranked (`_relative_ranks`), to rank again
    tables: tuple[tuple, ...]  # what it added to the scope's tables (`_tables_added`)
    # the nodes it asked an id for (`Interpreter._id`), in order: asked again, another
    # interpreter gives the ids running would have given
    ids: tuple[tuple[str, ast.AST], ...]
    reads: tuple[tuple[str, Value], ...]  # (global name, its value) where it ran
    absent: frozenset[str]  # the closure's global names the environment did not hold


# functions whose run was not plain for a reason of the body's own: not tried again
NOT_PLAIN: weakref.WeakSet = weakref.WeakSet()


# function -> its plain runs by context key, for the whole run (a helper imported by every
# file is run once per context, not once per analysis); kept by the function's node, so an
# edited function (a new node) starts afresh
RUNS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
MAX_CONTEXTS = 32  # runs kept per function; past this, the oldest go first
FRAME_DEPTH = re.compile(r"#(\d+)")


@dataclass
class PlainCalls:
    """The plain runs one interpreter computed and applied (counts, by function name)."""

    # the runs kept by this interpreter only (`_shareable`, a recursion), by (function id,
    # context key)
    own: dict[tuple, PlainRun] = field(default_factory=dict)
    computed: Counter = field(default_factory=Counter)
    applied: Counter = field(default_factory=Counter)

    def may_take(self, interpreter, call: Call) -> bool:
        """Whether the call's function may be a plain call, by its text (asked before the
        context is worked out)."""
        function = call.function
        if function in NOT_PLAIN or call.cls is not None:
            return False
        if interpreter.skipped_as_inert(function):
            return False  # not followed at all (`CallsMixin._call_function`)
        return _closure(interpreter, function) is not None

    def call(self, interpreter, call: Call, env: dict, key: tuple) -> Value | None:
        """The call's value from an earlier plain run of its context (run now if there is
        none), or None when the body must run as usual (`may_take` said yes)."""
        from loopfix.model.summaries import _bound_of

        function, bound = call.function, _bound_of(call)
        tables = (interpreter.listed, interpreter.param_groups)
        if not _plain_arguments(bound, env, tables):
            return None
        names, functions = _closure(interpreter, function)
        if any(id(f) in functions for f in interpreter.call_stack):
            return None  # a recursion through its callers stops where it would not
        key = (
            *key,
            _arguments_context(bound, env),
            _entries_below(interpreter),
            interpreter.iterating,
            frozenset(interpreter.element_names),
            frozenset(interpreter.leaves),
        )
        runs = RUNS.setdefault(function, {})
        run = runs.get(key) or self.own.get((id(function), key))
        if run is None:
            run = _computed(interpreter, call, env, names)
            if run is FAILED:
                NOT_PLAIN.add(function)
                return None
            if run is None:
                return None  # a global read holds a graph or a non-plain value here
            # a run recording a call of the function itself (a recursion) would keep the
            # function, its key in `RUNS`, alive: kept by this interpreter only
            if _shareable(run) and all(entry[0] is not function for entry in run.calls):
                runs[key] = run
                if len(runs) > MAX_CONTEXTS:
                    del runs[next(iter(runs))]
            else:
                self.own[id(function), key] = run
            self.computed[function.name] += 1
        elif not _guards_hold(run, env) or not _ranked_again(interpreter, call, run, False):
            return None
        self.applied[function.name] += 1
        if _check_enabled():
            return _checked(interpreter, call, env, run)
        return _applied(interpreter, call, run)


# ---------------------------------------------------------------------------- the context
def plain_shape(shape) -> bool:
    """Whether a value of `shape` can hold nothing a rule asks about but its own graph: a
    tensor, a number, a string, `None`, an unknown value, or a container of those
    (`shapes`' lattice); not a module, an optimizer, parameters or a project object."""
    if shape in (
        None,
        shapes.TENSOR,
        shapes.NONE,
        shapes.OTHER,
        shapes.UNKNOWN,
        shapes.NUMPY_ARRAY,
    ):
        return True
    if not isinstance(shape, tuple):
        return False
    kind = shape[0]
    if kind in ("seq", "vtuple", "opt"):
        return plain_shape(shape[1])
    if kind == "tuple":
        return all(plain_shape(item) for item in shape[1])
    if kind == "record":
        return all(plain_shape(item) for item in shape[2])
    if kind == "dict":
        return all(plain_shape(item) for _, item in shape[1])
    return False


def _plain_value(value: Value, opaque: bool = False) -> bool:
    """No graph (with `opaque`, none but the opaque one: data of unknown origin) in a
    plain shape."""
    allowed = OPAQUE.graphs if opaque else frozenset()
    parts = (value.parts or ()) + (value.item_parts or ())
    return (
        value.graphs <= allowed
        and all(part <= allowed for part in parts)
        and plain_shape(value.shape)
    )


def _plain_arguments(bound: dict, env: dict, tables: tuple) -> bool:
    """Every argument (`bound`: parameter -> (value, the caller's key)) is plain, and the
    caller keeps nothing under a path it passes nor lists its items (`tables`: the
    interpreter's lists and param groups)."""
    paths = []
    for value, key in bound.values():
        if not _plain_value(value, opaque=True):
            return False
        if key is not None:
            paths.append(key)
    if any(key in listed for key in paths for listed in tables):
        return False  # a list the caller built from names: the body reads the names
    if not paths:
        return True
    prefixes = tuple(p + c for p in paths for c in ".[")
    return not any(k.startswith(prefixes) for k in env)


def _entries_below(interpreter) -> frozenset:
    """The entries of the scope's tables (`memo._left`) under keys of the frames a call from
    here runs in (`#2f:x` for a call at depth 1 or more), left by earlier calls: the body
    reads them as running would."""
    depth = interpreter.frame.depth + 1
    found = set()
    for name, table in memo._tables(interpreter).items():
        for entry in table:
            key = entry[0] if isinstance(entry, tuple) and entry else entry
            if isinstance(key, str) and key.startswith("#") and _own_key(key, depth):
                value = table[entry] if isinstance(table, dict) else None
                found.add((name, entry, _frozen(value)))
    return frozenset(found)


def _frozen(value):
    if isinstance(value, set | frozenset):
        return frozenset(value)
    if isinstance(value, dict):
        return frozenset(value.items())
    if isinstance(value, list):
        return tuple(value)
    return value


def _arguments_context(bound: dict, env: dict) -> tuple:
    """For each argument: how it is named where the call is (not at all, by a called
    function's local `#2f:x`, by a name, or by an attribute or item path) and whether the
    environment holds that key (what the body writes into a parameter reaches the caller's
    variable by that path), and how many items it holds apart."""
    return tuple(
        (_form(key), key in env, None if v.item_parts is None else len(v.item_parts))
        for v, key in bound.values()
    )


def _form(key: str | None) -> str | None:
    if key is None or key.startswith("#"):
        return key and "#"
    return "path" if "." in key or "[" in key else "name"


def _closure(interpreter, function) -> tuple[frozenset[str], frozenset[int]] | None:
    """The global names `function` and the project functions it may call read (each
    function's names that are neither its parameters nor its locals) and those functions'
    ids, or None when one of them is not plain by its text, it constructs an object of a
    project class (what a class's instances hold depends on the analysis: `Instances`), or
    the closure is too large. Once per function."""
    home = interpreter.home_of(function)
    key = ("plain-closure", id(function))
    if key not in home.facts:
        home.facts[key] = _closure_of(interpreter, function)
    return home.facts[key]


def _closure_of(interpreter, function) -> tuple[frozenset[str], frozenset[int]] | None:
    names: set[str] = set()
    seen = {id(function)}
    frontier = [(function, interpreter.home_of(function))]
    for _ in range(MAX_DEPTH + 1):
        following = []
        for current, symbols in frontier:
            own = interpreter.instances.local_names(current)
            for node in walk(current):
                if isinstance(node, NOT_PLAIN_NODES) and node is not current:
                    return None
                if isinstance(node, ast.Attribute) and node.attr in NOT_PLAIN_NAMES:
                    return None
                if isinstance(node, ast.Name):
                    if node.id in NOT_PLAIN_NAMES:
                        return None
                    if node.id not in own:
                        names.add(node.id)
                if not isinstance(node, ast.Call):
                    continue
                if _constructs(node.func, symbols) or _calls_parameter(node.func, current):
                    return None
                for callee in project_callees(node.func, symbols):
                    if id(callee) not in seen:
                        seen.add(id(callee))
                        following.append((callee, symbols.home(callee)))
        if len(seen) > MAX_FUNCTIONS:
            return None
        frontier = following
    return None if frontier else (frozenset(names), frozenset(seen))


def _calls_parameter(func: ast.expr, function) -> bool:
    """`f(x)` where `f` is a parameter: which body runs depends on the caller (a function
    defined in the caller and passed on)."""
    arguments = function.args
    parameters = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
    return isinstance(func, ast.Name) and func.id in {a.arg for a in parameters}


def _constructs(func: ast.expr, symbols) -> bool:
    """`Config()`, `models.Net()`: a call of a class of the project."""
    name = dotted_name(func) or ""
    if name and "." not in name:
        return symbols.class_named(name) is not None
    return name != "" and isinstance(symbols.member(func), ClassInfo)


def _reads(closure: frozenset[str], env: dict) -> tuple | None:
    """(name, value) of every global name in the closure the environment holds, or None
    when one holds a graph or a value that is not plain."""
    reads = []
    for name in sorted(closure):
        value = env.get(name)
        if value is None:
            continue
        if not _plain_value(value, opaque=True):
            return None
        reads.append((name, value))
    return tuple(reads)


def _guards_hold(run: PlainRun, env: dict) -> bool:
    for name, value in run.reads:
        if env.get(name) != value:
            return False
    return not any(name in env for name in run.absent)


# ---------------------------------------------------------------------------- running
def _computed(interpreter, call: Call, env: dict, closure: frozenset[str]) -> object:
    """The body's run on the call's arguments, kept; None when this context cannot have
    one (a global holds a graph), FAILED when the run was not plain."""
    reads = _reads(closure, env)
    if reads is None:
        return None
    absent = frozenset(name for name in closure if name not in env)
    before = _state(interpreter)
    left = memo._left(interpreter)
    prefix = interpreter._callee_frame(call).site_prefix
    events = interpreter.env_events
    scratch = dict(env)
    real_obs, interpreter.obs = interpreter.obs, Observations()
    # the loops inside are remembered among themselves, in the run's own observations
    loop_memo = interpreter.loop_memo
    kept_memo = (loop_memo.table, loop_memo.kept, loop_memo.observations)
    loop_memo.table, loop_memo.kept, loop_memo.observations = {}, 0, interpreter.obs
    interpreter.written_stack.append(set())
    interpreter.call_sites.journals.append([])
    interpreter.id_journals.append({})
    interpreter.rank_journals.append({})
    try:
        returned, after, frame = interpreter._run_body(call, scratch)
        written = interpreter.written_stack[-1]
        recorded = interpreter.obs
    finally:
        ranked = tuple(interpreter.rank_journals.pop())
        ids = tuple(interpreter.id_journals.pop().values())
        calls = tuple(interpreter.call_sites.journals.pop())[1:]  # after the call's own
        interpreter.written_stack.pop()
        interpreter.obs = real_obs
        loop_memo.table, loop_memo.kept, loop_memo.observations = kept_memo
    from loopfix.model.summaries import _same_outside

    ranks = _relative_ranks(interpreter, ranked, prefix)
    tables = _tables_added(interpreter, left)
    plain = (
        ranks is not None
        and tables is not None
        and _tables_own(tables, frame.depth)
        and interpreter.env_events == events
        and _plain_value(returned, opaque=True)
        and _records_nothing(recorded)
        and _same_outside(env, after, frame.prefix)
        and all(_own_key(key, frame.depth) for key in written)
        and all(_plain_value(v, True) for _, bound, *_ in calls for v, _ in bound.values())
        and _state(interpreter) == before
    )
    if not plain:
        return FAILED
    return PlainRun(returned, frozenset(written), calls, ranks, tables, ids, reads, absent)


# the interpreter's state a plain run changes as running the body does, and its application
# does again: the calls recorded (`CallSites.journals`, but for the classes of the objects
# passed, compared), the ids given to the body's nodes and the cache of its `if` chains
# (given once per node, as running gives them), and the ranks of the calls it made
# (`_relative_ranks`)
CHANGED_AS_BY_RUNNING = frozenset({"call_sites", "_ids", "_id_counts", "_chains", "_calls_from"})
# caches of facts of nodes and modules, which running fills as reading them again would
CACHES = frozenset({"kept", "_walked_loops", "symbols"})
SYMBOLS_CACHES = frozenset({"facts", "_whole"})


def _state(interpreter) -> dict[str, object]:
    state = memo.interpreter_state(interpreter)
    for name in CHANGED_AS_BY_RUNNING | CACHES:
        state.pop(name, None)
    state["call_sites.classes"] = dict(interpreter.call_sites.classes)
    symbols = vars(interpreter.symbols)
    state["symbols"] = {k: memo._shallow(v) for k, v in symbols.items() if k not in SYMBOLS_CACHES}
    return state


def _tables_added(interpreter, left: dict) -> tuple | None:
    """What the run added to the scope's tables (`memo._left`), all of it under the keys of
    callees' locals (`#` in the key: gone with the call, as the body leaves them); None
    when it changed or dropped anything else."""
    added = []
    for name, now in memo._left(interpreter).items():
        was = left[name]
        if now == was:
            continue
        if not isinstance(now, dict | set) or not isinstance(was, dict | set):
            return None
        if isinstance(now, set):
            new = now - was
            if was - now or not all(_local(item) for item in new):
                return None
            added.append((name, frozenset(new)))
            continue
        new = {k: v for k, v in now.items() if k not in was or was[k] != v}
        if was.keys() - now.keys() or not all(_local(k) for k in new):
            return None
        added.append((name, tuple(new.items())))
    return tuple(added)


def _local(key) -> bool:
    """A key of a callee's local (`#2helper:x`), or a tuple starting with one."""
    if isinstance(key, tuple) and key:
        key = key[0]
    return isinstance(key, str) and key.startswith("#")


def _shareable(run: PlainRun) -> bool:
    """Whether the run names no loop id of the interpreter that ran it (`#iterable3_0`, a
    loop's iterable: ids are given per interpreter), in the keys it wrote or the entries
    it added to the scope's tables."""
    names = [*run.written]
    for _, added in run.tables:
        for entry in added:
            names += [part for part in _flat(entry) if isinstance(part, str)]
    return not any(name.startswith("#iterable") for name in names)


def _tables_own(tables: tuple, depth: int) -> bool:
    """Whether what the run added to the scope's tables names only its own frames' keys
    (a list of the caller's modules, `[self.g, self.d]`, is the caller's)."""
    for _, added in tables:
        for entry in added:
            parts = [part for part in _flat(entry) if isinstance(part, str)]
            if not all(_own_key(part, depth) for part in parts if _is_key(part)):
                return False
    return True


def _is_key(text: str) -> bool:
    """A string that names an environment key (not a literal the tables hold)."""
    return text.startswith("#") or text.replace(".", "").replace("_", "").isalnum()


def _flat(entry) -> list:
    if isinstance(entry, tuple | frozenset | set | list):
        return [part for item in entry for part in _flat(item)]
    return [entry]


def _own_key(key: str, depth: int) -> bool:
    """A key of the called function's frame or of a frame below it (`#2helper:x` at depth
    2 or more), or of a loop's iterable it walked (`#iterable3_0`): not a caller's."""
    found = FRAME_DEPTH.match(key)
    return key.startswith("#iterable") if found is None else int(found.group(1)) >= depth


def _records_nothing(recorded: Observations) -> bool:
    """The run recorded nothing but writes of its own locals (and the loops it ran: no
    graph carried across their back-edges)."""
    for name, table in vars(recorded).items():
        if name == "writers":
            if any("#" not in key for _, key in table):
                return False
        elif name == "chained":
            if any(table.values()):
                return False
        elif table:
            return False
    return True


def _relative_ranks(interpreter, ranked: tuple, prefix: tuple) -> tuple | None:
    """The calls the run ranked (`CallsMixin._call_site`: the calls of a function at one
    site, in order of first evaluation), each as (its site prefix and site after the call's
    own prefix, function id, call node id, the rank it got), in the order they were asked;
    None when one was ranked where the call's own prefix does not lead."""
    relative = []
    for place, node in ranked:
        _, site_prefix, site, function_id = place
        if site_prefix[: len(prefix)] != prefix or (site and site[: len(prefix)] != prefix):
            return None
        where = (site_prefix[len(prefix) :], site[len(prefix) :] if site else None)
        rank = interpreter._calls_from[place].index(node)
        relative.append((where, function_id, node, rank))
    return tuple(relative)


def _ranked_again(interpreter, call: Call, run: PlainRun, commit: bool) -> bool:
    """Rank the run's calls where this call runs, as running ranks them; whether each gets
    the rank it got in the run (the calls ranked before at those places decide). Without
    `commit`, the ranks are only worked out."""
    prefix = interpreter._callee_frame(call).site_prefix
    added: dict[tuple, list[int]] = {}
    for (site_prefix, site), function_id, node, rank in run.ranks:
        site = () if site is None else prefix + site
        place = (interpreter.scope_number, prefix + site_prefix, site, function_id)
        calls = interpreter._calls_from.get(place, [])
        extra = added.setdefault(place, [])
        if node in calls:
            found = calls.index(node)
        elif node in extra:
            found = len(calls) + extra.index(node)
        else:
            found = len(calls) + len(extra)
            extra.append(node)
        if found != rank:
            return False
    if commit:
        for place, extra in added.items():
            interpreter._calls_from.setdefault(place, []).extend(extra)
    return True


def _applied(interpreter, call: Call, run: PlainRun) -> Value:
    for kind, node in run.ids:
        interpreter._id(kind, node)
    interpreter.record_call(call)
    memo._record_again(interpreter, run.calls)
    tables = memo._tables(interpreter)
    for name, added in run.tables:
        if isinstance(added, frozenset):
            tables[name] |= added
        else:
            tables[name].update(added)
    _ranked_again(interpreter, call, run, commit=True)
    for key in run.written:
        interpreter.note_write(key)
    return run.returned


def _checked(interpreter, call: Call, env: dict, run: PlainRun) -> Value:
    """Run the body, then apply the run from the state the body started from: the value,
    the environment, the writes, the calls recorded (`CallSites`' tables), the calls ranked
    and the scope's tables must agree."""
    from loopfix.model.summaries import SummaryMismatch

    sites = interpreter.call_sites
    start_sites, start_env = _sites_copy(sites), dict(env)
    start_left = memo._left(interpreter)
    ranked = {place: list(calls) for place, calls in interpreter._calls_from.items()}
    interpreter.written_stack.append(set())
    try:
        returned, after, frame = interpreter._run_body(call, env)
        written = interpreter.written_stack[-1]
    finally:
        interpreter.written_stack.pop()
    env.clear()
    env.update({k: v for k, v in (after or {}).items() if not k.startswith(frame.prefix)})
    ran_sites, ran_left = _sites_copy(sites), memo._left(interpreter)
    ran_ranks = {place: list(calls) for place, calls in interpreter._calls_from.items()}
    # the same start again, for the run's application
    for table_name, table in start_sites.items():
        getattr(sites, table_name).clear()
        getattr(sites, table_name).update(table)
    memo._restore(interpreter, start_left)
    interpreter._calls_from.clear()
    interpreter._calls_from.update(ranked)
    applied = _applied(interpreter, call, run)
    name = call.function.name
    if returned != applied or env != start_env:
        raise SummaryMismatch(f"{name}: plain run {applied} != body {returned}")
    if frozenset(written) != run.written:
        raise SummaryMismatch(f"{name}: wrote {set(written) ^ run.written}")
    now_sites = _sites_copy(sites)
    if now_sites != ran_sites:
        differ = [t for t in now_sites if now_sites[t] != ran_sites[t]]
        raise SummaryMismatch(f"{name}: recorded other calls ({differ})")
    if interpreter._calls_from != ran_ranks:
        raise SummaryMismatch(f"{name}: ranked other calls")
    now_left = memo._left(interpreter)
    if now_left != ran_left:
        differ = [t for t in now_left if now_left[t] != ran_left[t]]
        raise SummaryMismatch(f"{name}: left other tables ({differ})")
    return returned


def _sites_copy(sites) -> dict:
    """`CallSites`' tables (all but the journals), each copied two levels deep."""
    return {
        f.name: memo._deep(getattr(sites, f.name))
        for f in dataclasses.fields(sites)
        if f.name != "journals"
    }


def _check_enabled() -> bool:
    from loopfix.model import summaries

    return summaries.CHECK
