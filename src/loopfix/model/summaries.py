"""Function summaries: what a call of a project function does to autograd graphs, computed
once per function and calling context and applied at every call site that has that context.

A call is followed into the callee's body (`calls.CallsMixin._call_function`). For the
functions whose effect is a pure data flow, a loss helper (`compute_loss(model, x, y)`), a
module's `forward` without loops, a helper that builds features, the body is run once on
placeholder arguments: each parameter holds a graph standing for "whatever the caller
passes here" (a placeholder per item of a tuple it is given). The summary is what comes out:
the returned value in terms of those placeholders and of the graphs the body's own module
calls build, the module paths those calls are known by (in terms of the receiver and the
arguments that name modules), and the local names it wrote. Applying it at a call site
substitutes the caller's arguments for the placeholders, the call's own site for the sites
the body built, and the caller's receiver and argument paths for the ones the summary was
computed with; no statement of the body runs again.

A function is summarised only when the result cannot depend on anything the summary does not
substitute (the context key and the guards below); otherwise the call is followed into the
body as before, in every context and for the rest of the run (`UNSUMMARISABLE`: the other
files importing it do not try again; such a call may still be a plain call, run once per
context on its own arguments: `plain.py`). The body must:
- record nothing but the module-call sites it builds: no backward, optimizer or scheduler
  step, accumulation, effect on its caller's statement, or loop (a loop's fixpoint depends on
  the graphs it carries);
- write no name outside its own locals (no `self.h = ...`: state stored on a module);
- read, outside its parameters, only values without graphs (submodules, settings): each such
  read is a guard, checked again, renamed, where the summary is applied.
The context key holds what else the body's evaluation depends on: the function and its
class, each argument's shape, which arguments name modules, the grad mode, whether the
module is frozen, the call depth, the tests its enclosing loops assume and the literals the
call binds the parameters its tests read to (`Call.literals`).

`Summaries.stats` counts, per function, the summaries computed and the calls they served:
`LoopModel.summary_counts()` gives them to tests (a helper called from N sites is summarised
once and applied N times). With `LOOPFIX_CHECK_SUMMARIES=1` every application is checked
against running the body (for the test suite: any difference raises); with
`LOOPFIX_SUMMARIES=0` none is used (to compare).
"""

from __future__ import annotations

import ast
import os
import weakref
from collections import Counter
from dataclasses import dataclass, field

from loopfix.model import shapes
from loopfix.model.calls import sets_up_returned_object
from loopfix.model.frames import Call, Observations
from loopfix.model.graphs import PLACEHOLDER, Graph, Value
from loopfix.model.index import walk
from loopfix.model.plain import PlainCalls

REST, ALL = -1, -2  # a placeholder's part index: the graphs outside any item / no items
CHECK = os.environ.get("LOOPFIX_CHECK_SUMMARIES") == "1"
ENABLED = os.environ.get("LOOPFIX_SUMMARIES") != "0"  # "0": every call runs its body
# observation tables a summarisable body may add to (anything else: not summarisable)
ALLOWED = frozenset({"site_modules", "statement_modules", "writers"})


class SummaryMismatch(AssertionError):
    """`LOOPFIX_CHECK_SUMMARIES=1`: a summary's application differs from running the body."""


@dataclass(frozen=True)
class Summary:
    returned: Value  # in placeholder terms
    sites: dict[tuple, frozenset]  # the sites the body's module calls built -> their paths
    statement_paths: frozenset  # paths the body's module calls add to the caller's statement
    written: frozenset[str]  # the callee's local keys it wrote
    prefix: tuple  # the site prefix it was computed under
    roots: tuple[tuple[str, str], ...]  # (placeholder root, path it stood for): receiver, args
    reads: tuple[tuple[str, object], ...]  # (key in placeholder roots, shape) read outside
    frozen: tuple[tuple[str, bool], ...]  # module paths built from, frozen or not


FAILED = object()  # a context whose body cannot be summarised
# a context refused before the body ran (`_compute`): other contexts of the function are tried
REFUSED = object()


@dataclass
class Summaries:
    """The summaries of one analysis (one interpreter), by context key."""

    table: dict[tuple, object] = field(default_factory=dict)
    computed: Counter = field(default_factory=Counter)  # function name -> summaries computed
    applied: Counter = field(default_factory=Counter)  # function name -> calls they served
    plain: PlainCalls = field(default_factory=PlainCalls)  # the bodies no summary takes

    def call(self, interpreter, call: Call, env: dict) -> Value | None:
        """The call's result from its summary (computed now if its context has none), or
        from an earlier run of a plain call (`plain`), or None when the body must run."""
        if not ENABLED or sets_up_returned_object(call.function):
            return None  # a factory: its caller's name gets the attributes it sets
        if id(call.function) in interpreter.closures:
            return None  # a closure: its free names are the enclosing frame's, not roots
        plain = call.function in UNSUMMARISABLE or _ruled_out(interpreter, call.function)
        if plain and not self.plain.may_take(interpreter, call):
            return None
        roots = _roots(interpreter, call)
        if roots is None:
            return None
        key = _context_key(interpreter, call, roots)
        if plain:
            return self.plain.call(interpreter, call, env, key)
        summary = self.table.get(key)
        if summary is None:
            summary = _compute(interpreter, call, env, roots)
            if summary is None:  # the body ran and is not a summary: in no context
                UNSUMMARISABLE.add(call.function)
            if summary is None or summary is REFUSED:
                summary = FAILED
            else:
                self.computed[call.function.name] += 1
            self.table[key] = summary
        if summary is FAILED:
            return None
        if not _guards_hold(interpreter, summary, roots, env):
            return None
        self.applied[call.function.name] += 1
        if CHECK:
            return _checked(interpreter, call, env, summary, roots)
        return _apply(interpreter, call, env, summary, roots)


# A function whose body could not be summarised in some context runs its body in every
# context (trying each context would run such a body twice), for the rest of the run: a
# project helper imported by hundreds of analysed files is tried once, not once per file.
# Kept by the function's node (a weak reference: the entry goes with the module's tree; an
# edited function is a new node). Running a body gives what applying its summary gives
# (`CHECK`), so which calls are summarised changes no result.
UNSUMMARISABLE: weakref.WeakSet = weakref.WeakSet()


# ---------------------------------------------------------------------------- the context
def _roots(interpreter, call: Call) -> dict[str, str] | None:
    """Placeholder root -> the path it stands for at this call: `<self>` for the receiver,
    `<name>` for each argument the caller names by a path. None when a path is also a
    global name of the callee's module (a substitution could not tell them apart)."""
    frame = interpreter._callee_frame(call)
    roots = {"<self>": frame.self_path} if frame.self_path else {}
    bound = _bound_of(call)
    for name, (_, key) in bound.items():
        if key is not None:
            roots[f"<{name}>"] = interpreter.outer_key(key)
    names = _global_reads(interpreter, call.function)
    if any(path.split(".")[0].split("[")[0] in names for path in roots.values()):
        return None  # the body reads a global of that name: a substitution would rename it
    if len(set(roots.values())) < len(roots):
        return None  # the receiver passed as an argument too: one path, two roots
    if any(key in interpreter.listed for _, key in bound.values() if key is not None):
        return None  # the callee may unpack a list the caller built from names
    return roots


def _global_reads(interpreter, function) -> frozenset[str]:
    """The names the body reads that are neither its parameters nor its locals."""
    symbols = interpreter.home_of(function)
    names = symbols.remember(("summary-names", id(function)), _dotted_names, function)
    own = interpreter.instances.local_names(function) | {
        a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    }
    return frozenset(n for n in names if "." not in n and n not in own)


def _context_key(interpreter, call: Call, roots: dict[str, str]) -> tuple:
    arguments = tuple(
        (
            name,
            shapes.rename_paths(value.shape, _to_placeholders(roots)),
            None if value.parts is None else len(value.parts),
            value.item_parts is not None,
        )
        for name, (value, _) in _bound_of(call).items()
    )
    return (
        id(call.function),
        call.cls.node.name if call.cls is not None else None,
        arguments,
        tuple(sorted(roots)),
        interpreter.no_grad,
        interpreter.grad_mode_unknown > 0,
        interpreter.frozen_forwards > 0,
        interpreter.frame.depth,
        tuple(sorted(interpreter.assumed.items())),
        tuple(sorted((k, repr(v)) for k, v in interpreter.phases.items())),
        tuple(sorted((k, repr(v)) for k, v in call.literals.items())),
    )


def _bound_of(call: Call) -> dict:
    from loopfix.model.calls import _bound

    return _bound(call.function, call.positional, call.keywords, call.cls is not None)


# ---------------------------------------------------------------------------- computing
def _compute(interpreter, call: Call, env: dict, roots: dict[str, str]) -> Summary | None:
    """Run the body once on placeholder arguments, in a copy of the caller's environment
    and with observations of its own; None when the result is not a summary, `REFUSED`
    when this context cannot have one (an argument holding items of its own, a read that
    holds a graph), found without running the body."""
    function = call.function
    if _ruled_out(interpreter, function):
        return None
    bound = _bound_of(call)
    placeholders: dict[str, Value] = {}
    for index, (name, (value, _)) in enumerate(bound.items()):
        if value.item_parts is not None:
            return REFUSED
        placeholders[name] = _placeholder(index, value)
    reads = _reads(interpreter, function, roots, env)
    if reads is None:
        return REFUSED
    scratch = dict(env)
    real_obs, interpreter.obs = interpreter.obs, Observations()
    interpreter.written_stack.append(set())
    try:
        returned, after, frame = interpreter._run_body(call, scratch, placeholders)
        written = interpreter.written_stack[-1]
        recorded = interpreter.obs
    finally:
        interpreter.written_stack.pop()
        interpreter.obs = real_obs
    if not _only_sites(recorded) or not _same_outside(env, after, frame.prefix):
        return None
    if any("#" not in key for key in written):
        return None  # it wrote a name outside its own locals
    if any(
        not g.opaque
        and g.site[0] != PLACEHOLDER
        and g.site[: len(frame.site_prefix)] != frame.site_prefix
        for g in _all_graphs(returned)
    ):
        return None  # a graph that is neither an argument's nor the body's own
    to_placeholders = _to_placeholders(roots)
    sites = {
        site: frozenset(_rename_path(p, to_placeholders) for p in paths)
        for site, paths in recorded.site_modules.items()
    }
    top = interpreter.top_statement
    statement_paths = frozenset(
        _rename_path(p, to_placeholders)
        for p in recorded.statement_modules.get(id(top), ())
        if top is not None
    )
    frozen = tuple(
        (path, interpreter._frozen(_rename_path(path, roots)))
        for paths in sites.values()
        for path in paths
        if path is not None
    )
    return Summary(
        returned=_rename_value_paths(returned, to_placeholders),
        sites=sites,
        statement_paths=statement_paths,
        written=frozenset(written),
        prefix=frame.site_prefix,
        roots=tuple(sorted(roots.items())),
        reads=reads,
        frozen=frozen,
    )


def _ruled_out(interpreter, function) -> bool:
    """Whether the body plainly cannot be summarised, read once per function: a loop or a
    comprehension (their fixpoint relabels the graphs they carry), a nested function or
    class, or a statement with an effect (a backward, a step, a store into an attribute or
    an item, an in-place add, a container's append), in its own statements or in those of
    a project function it calls by name (`helper(x)`, `utils.helper(x)`: that body runs
    inside it and records the same), where trying would only run the body twice. Not trying
    changes no result: the body runs instead, which gives what the summary would give."""
    return _ruled_out_in(interpreter.home_of(function), function, set())


def _ruled_out_in(symbols, function, seen: set[int]) -> bool:
    if symbols.remember(("summary-ruled-out", id(function)), _ruled_out_body, function):
        return True
    if id(function) in seen:
        return False  # recursion: what the cycle's other bodies do is asked once
    seen.add(id(function))
    key = ("summary-calls-ruled-out", id(function))
    if key not in symbols.facts:
        symbols.facts[key] = _calls_ruled_out(function, symbols, seen)
    return symbols.facts[key]


def _calls_ruled_out(function, symbols, seen: set[int]) -> bool:
    """Whether the body calls, by name, a project function that is ruled out itself (a
    method call is not followed: which body runs depends on the receiver)."""
    from loopfix.model.symbols import project_callees

    for statement in function.body:
        for node in walk(statement):
            if not isinstance(node, ast.Call):
                continue
            if isinstance(node.func, ast.Attribute) and symbols.member(node.func) is None:
                continue
            for callee in project_callees(node.func, symbols):
                if _ruled_out_in(symbols.home(callee), callee, seen):
                    return True
    return False


RULED_OUT = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.Global,
    ast.Nonlocal,
    ast.Yield,
    ast.YieldFrom,
    ast.AugAssign,
)
# methods whose call is an effect loopfix records (a body calling one is not summarised)
EFFECT_METHODS = frozenset(
    {
        "backward",
        "manual_backward",
        "step",
        "zero_grad",
        "grad",
        "append",
        "extend",
        "insert",
        "update",
        "clear",
        "pop",
        "add_",
        "copy_",
        "detach_",
        "requires_grad_",
    }
)


def _ruled_out_body(function) -> bool:
    for statement in function.body:
        for node in walk(statement):
            if isinstance(node, RULED_OUT):
                return True
            if isinstance(node, ast.Attribute) and (
                node.attr in EFFECT_METHODS or isinstance(node.ctx, ast.Store)
            ):
                return True
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                return True
    return False


def _placeholder(index: int, value: Value) -> Value:
    if value.parts is None:
        return Value(frozenset({Graph((PLACEHOLDER, index, ALL))}), value.shape)
    parts = tuple(frozenset({Graph((PLACEHOLDER, index, j))}) for j in range(len(value.parts)))
    rest = frozenset({Graph((PLACEHOLDER, index, REST))})
    return Value(frozenset().union(*parts) | rest, value.shape, parts)


def _reads(interpreter, function, roots: dict[str, str], env: dict):
    """(key in placeholder terms, shape) for every key outside the callee's locals that its
    body's dotted names can read (each prefix of `self.enc.l1`), or None when one of them
    holds a graph (state kept on a module, a global tensor)."""
    symbols = interpreter.home_of(function)
    names = symbols.remember(("summary-names", id(function)), _dotted_names, function)
    parameters = {
        a.arg for a in function.args.posonlyargs + function.args.args + function.args.kwonlyargs
    }
    first = (function.args.posonlyargs + function.args.args)[:1]
    self_name = first[0].arg if first and roots.get("<self>") else None
    locals_ = interpreter.instances.local_names(function)
    reads = []
    for dotted in names:
        root, _, rest = dotted.partition(".")
        if root == self_name:
            base = "<self>"
        elif root in parameters:
            if not rest or f"<{root}>" not in roots:
                continue  # the parameter itself, or an attribute of a value passed in
            base = f"<{root}>"
        elif root in locals_:
            continue
        else:
            base = None  # a global
        key = f"{base}.{rest}" if base and rest else (base or dotted)
        actual = _rename_path(key, roots)
        value = env.get(actual)
        if value is not None and value.graphs:
            return None
        shape = None if value is None else shapes.rename_paths(value.shape, _to_placeholders(roots))
        reads.append((key, shape))
    return tuple(sorted(reads, key=lambda r: r[0]))


def _dotted_names(function) -> frozenset[str]:
    """Every dotted name the body reads, and each of its prefixes (`self.enc.l1` gives
    `self`, `self.enc`, `self.enc.l1`)."""
    from loopfix.model.symbols import dotted_name

    found = set()
    for stmt in function.body:
        for node in walk(stmt):
            if isinstance(node, ast.Attribute | ast.Name):
                dotted = dotted_name(node)
                if dotted is None:
                    continue
                parts = dotted.split(".")
                found.update(".".join(parts[: i + 1]) for i in range(len(parts)))
    return frozenset(found)


def _only_sites(recorded: Observations) -> bool:
    """The body recorded nothing but the sites its module calls built (and writes of its
    own locals)."""
    for name, table in vars(recorded).items():
        if name in ALLOWED or not table:
            continue
        return False
    return all("#" in key for _, key in recorded.writers)


def _same_outside(before: dict, after: dict | None, prefix: str) -> bool:
    """The body changed no key outside its own locals."""
    if after is None:
        return True
    outside = {k: v for k, v in after.items() if not k.startswith(prefix)}
    return outside == before


def _all_graphs(value: Value) -> frozenset[Graph]:
    graphs = set(value.graphs)
    for part in (value.parts or ()) + (value.item_parts or ()):
        graphs |= part
    return frozenset(graphs)


# ---------------------------------------------------------------------------- applying
def _guards_hold(interpreter, summary: Summary, roots: dict[str, str], env: dict) -> bool:
    if tuple(sorted(roots)) != tuple(name for name, _ in summary.roots):
        return False
    for key, shape in summary.reads:
        value = env.get(_rename_path(key, roots))
        if value is not None and value.graphs:
            return False
        actual = (
            None if value is None else shapes.rename_paths(value.shape, _to_placeholders(roots))
        )
        if actual != shape:
            return False
    return all(interpreter._frozen(_rename_path(p, roots)) == was for p, was in summary.frozen)


def _apply(interpreter, call: Call, env: dict, summary: Summary, roots: dict[str, str]):
    bound = _bound_of(call)
    receiver = call.receiver_key if call.cls is not None else None
    interpreter.call_sites.record(
        call.function,
        bound,
        interpreter.listed,
        interpreter._modules_of,
        receiver,
        with_grad=interpreter.runs_with_grad(call.function),
    )
    prefix = interpreter._callee_frame(call).site_prefix
    arguments = {index: value for index, (value, _) in enumerate(bound.values())}

    def site_of(site: tuple) -> tuple:
        return prefix + site[len(summary.prefix) :]

    def graphs_of(graphs: frozenset[Graph]) -> frozenset[Graph]:
        result: set[Graph] = set()
        for graph in graphs:
            if graph.site and graph.site[0] == PLACEHOLDER:
                result |= _argument_graphs(arguments[graph.site[1]], graph.site[2])
            elif graph.opaque:
                result.add(graph)
            else:
                result.add(Graph(site_of(graph.site)))
        return frozenset(result)

    for site, paths in summary.sites.items():
        interpreter.obs.site_modules.setdefault(site_of(site), set()).update(
            _rename_path(p, roots) for p in paths
        )
    top = interpreter.top_statement
    if top is not None and summary.statement_paths:
        interpreter.obs.statement_modules.setdefault(id(top), set()).update(
            _rename_path(p, roots) for p in summary.statement_paths
        )
    for key in summary.written:
        interpreter.note_write(key)
    returned = summary.returned
    return Value(
        graphs_of(returned.graphs),
        shapes.rename_paths(returned.shape, roots),
        None if returned.parts is None else tuple(graphs_of(p) for p in returned.parts),
        None if returned.item_parts is None else tuple(graphs_of(p) for p in returned.item_parts),
        None
        if returned.inner is None
        else tuple(
            None if item is None else tuple(graphs_of(p) for p in item) for item in returned.inner
        ),
    )


def _argument_graphs(value: Value, part: int) -> frozenset[Graph]:
    if part == ALL:
        return value.graphs
    if part == REST:
        return value.graphs - frozenset().union(*value.parts)
    return value.parts[part]


def _checked(interpreter, call: Call, env: dict, summary: Summary, roots) -> Value:
    """Apply the summary and run the body too; they must agree."""
    summarised_env = dict(env)
    summarised = _apply(interpreter, call, summarised_env, summary, roots)
    sites_before = {k: set(v) for k, v in interpreter.obs.site_modules.items()}
    returned, after, frame = interpreter._run_body(call, env, None)
    env.clear()
    env.update({k: v for k, v in (after or {}).items() if not k.startswith(frame.prefix)})
    if summarised != returned or summarised_env != env:
        raise SummaryMismatch(f"{call.function.name}: summary {summarised} != body {returned}")
    if {k: set(v) for k, v in interpreter.obs.site_modules.items()} != sites_before:
        raise SummaryMismatch(f"{call.function.name}: the body built other sites")
    return returned


# ---------------------------------------------------------------------------- paths
def _to_placeholders(roots: dict[str, str]) -> dict[str, str]:
    """Real path -> placeholder root, longest first (an argument inside the receiver)."""
    return dict(
        sorted(((path, name) for name, path in roots.items()), key=lambda item: -len(item[0]))
    )


def _rename_path(path: str | None, renames: dict[str, str]) -> str | None:
    if path is None:
        return None
    for old, new in renames.items():
        if shapes.within(path, old):
            return new + path[len(old) :]
    return path


def _rename_value_paths(value: Value, renames: dict[str, str]) -> Value:
    return Value(
        value.graphs,
        shapes.rename_paths(value.shape, renames),
        value.parts,
        value.item_parts,
        value.inner,
    )


__all__ = ["Summaries", "Summary", "SummaryMismatch"]
