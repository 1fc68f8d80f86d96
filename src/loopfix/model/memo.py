"""Loop runs remembered: a loop entered again from the very state of an earlier entry leaves
what that entry left, so its fixpoint is not computed again.

Nested loops are where the interpreter spends its time: an outer loop is run to its fixpoint
(two passes at least, the second confirming the first), and each pass runs every loop inside
it, and every loop in the functions it calls, to their own fixpoints. The state a nested loop
starts from is often the same in both passes (`for b in range(n): hidden = init_hidden()`
binds all the inner loop reads before it starts), and then the second run repeats the first
statement for statement.

A run is reused when everything it can read is equal: the environment's keys the running
code can name (`_visible`: all but the callers' locals it was not given, which pass through
a loop unchanged), the graph pieces those other keys hold that the loop's back-edge may
meet (`_kept_pieces`: a piece held before the loop keeps its label), and the interpreter's
state around it (`_context`: where it is, which loops, phases, assumptions and calls enclose
it, the frame's aliases, the scope's element names, leaves, lists and item slots). What it
leaves is its flow (in the keys it can name, with the callers' other keys as they are now);
the keys it wrote, noted again as written (the enclosing loops' writers); the calls it
recorded, recorded again (what a call site says depends on what the analysis has seen by
then); and the tables of that state as the run left them. What it recorded in the
observations is already there, from the run that is reused. A run that ran a backward or
an optimizer step is not kept: those change every value holding the graphs they reach,
the callers' too.

With `LOOPFIX_CHECK_MEMO=1` every reuse is checked by running the loop again: its flow,
written keys and tables must be the ones replayed, and the run must change no observation
and no other part of the interpreter's state (for the test suite: a difference raises
`MemoMismatch`). `LOOPFIX_MEMO=0` runs every loop (to compare).
"""

from __future__ import annotations

import ast
import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass, field

from loopfix.model.graphs import Env, Flow

CHECK = os.environ.get("LOOPFIX_CHECK_MEMO") == "1"
ENABLED = os.environ.get("LOOPFIX_MEMO") != "0"  # "0": every loop runs its fixpoint
MAX_ENTRIES = 8  # runs remembered per loop and context: a loop whose entries keep changing
# runs remembered in all (each keeps the values of its entry alive, graphs and all): past
# this, the contexts met longest ago are forgotten first
MAX_RUNS = 400


class MemoMismatch(AssertionError):
    """`LOOPFIX_CHECK_MEMO=1`: running a loop again gave what its remembered run did not."""


@dataclass(frozen=True)
class Run:
    entry: Env  # the environment the loop started from, the keys it can read (`_visible`)
    kept: frozenset[tuple]  # the other keys' graph pieces its back-edge may meet (`_kept_pieces`)
    changes: tuple  # what each environment of its flow changed in those keys (`_changes`)
    returned: object  # the value its `return` statements return (a `Value`), or None
    written: tuple[tuple, ...]  # the keys it wrote, each with the statement that wrote it
    calls: tuple[tuple, ...]  # the calls it recorded (`CallSites.record`'s arguments)
    left: dict[str, object]  # the interpreter's state it left (`_left`)


@dataclass
class LoopMemo:
    """The loop runs of one interpreter, by loop and context."""

    table: dict[tuple, list[Run]] = field(default_factory=dict)  # oldest context first
    reused: int = 0  # runs served from the table
    kept: int = 0  # runs in the table
    # the observations of the scope being run: a loop run while others are recorded (a
    # summary being computed records into its own) is not remembered nor reused
    observations: object = None

    def start(self, observations) -> None:
        """A scope's run starts: forget the runs of the one before."""
        self.table.clear()
        self.kept = 0
        self.observations = observations

    def run(self, interpreter, node: ast.AST, env: Env, run_loop: Callable[[Env], Flow]) -> Flow:
        """`run_loop(env)`'s flow, remembered or computed."""
        if not ENABLED or interpreter.obs is not self.observations:
            return run_loop(env)
        key = _context(interpreter, node)
        runs = self.table.pop(key, [])
        self.table[key] = runs  # the context met last goes last
        visible = _visible(interpreter)
        seen = {k: v for k, v in env.items() if visible(k)}
        kept = _kept_pieces(interpreter, env, visible)
        for earlier in runs:
            if earlier.entry == seen and earlier.kept == kept:
                self.reused += 1
                flow = _replayed(earlier, env)
                if CHECK:
                    _check(interpreter, node, earlier, env, flow, run_loop)
                _write_again(interpreter, earlier.written)
                _record_again(interpreter, earlier.calls)
                _restore(interpreter, earlier.left)
                return flow
        events = interpreter.env_events
        interpreter.write_journals.append({})
        interpreter.call_sites.journals.append([])
        try:
            flow = run_loop(env)
        finally:
            written = tuple(interpreter.write_journals.pop())
            calls = tuple(interpreter.call_sites.journals.pop())
        # a backward or a step changes values the loop cannot name (its callers' graphs)
        if len(runs) < MAX_ENTRIES and interpreter.env_events == events:
            changes = _changes(flow, seen, visible)
            if self.table.get(key) is not runs:  # forgotten while the loop ran
                runs = self.table[key] = []
            left = _left(interpreter)
            runs.append(Run(seen, kept, changes, flow.returned, written, calls, left))
            self.kept += 1
            while self.kept > MAX_RUNS:
                self.kept -= len(self.table.pop(next(iter(self.table))))
        return flow


def _write_again(interpreter, written: tuple[tuple, ...]) -> None:
    """Note the keys a run wrote as written, each by the statement that wrote it (the
    enclosing loops' writers, `Observations.writers`)."""
    outer = interpreter.top_statement
    try:
        for key, statement in written:
            interpreter.top_statement = statement
            interpreter.note_write(key)
    finally:
        interpreter.top_statement = outer


def _record_again(interpreter, calls: tuple[tuple, ...]) -> None:
    """Record the calls a run recorded (`CallSites.journals`), as they would record now."""
    for function, bound, listed, modules, receiver, renames, with_grad in calls:
        modules_of = interpreter._modules_of if modules else None
        interpreter.call_sites.record(
            function, bound, listed, modules_of, receiver, renames, with_grad
        )


def _context(interpreter, node: ast.AST) -> tuple:
    """Everything besides the environment that a loop's run reads."""
    frame = interpreter.frame
    return (
        id(node),
        id(interpreter.symbols),
        interpreter.scope_number,
        frame.prefix,
        frame.self_path,
        frame.site_prefix,
        frame.depth,
        id(frame.cls),
        _items(frame.aliases),
        frozenset(frame.attribute_aliases),
        _items(frame.given_keys),
        frame.var_keywords,
        tuple((k, id(v)) for k, v in frame.passed.items()),
        repr(sorted(frame.literals.items())),
        tuple(interpreter.loop_stack),
        tuple(map(id, interpreter.call_stack)),
        tuple(map(id, interpreter.call_nodes)),
        tuple((id(f), id(c)) for f, c, _ in interpreter.followed),
        id(interpreter.top_statement),
        interpreter.no_grad,
        interpreter.grad_mode_unknown,
        interpreter.frozen_forwards,
        interpreter.iterating,
        repr(sorted(interpreter.phases.items())),
        _items(interpreter.assumed),
        frozenset(interpreter.element_names),
        frozenset(interpreter.leaves),
        _items(interpreter.listed),
        _items(interpreter.param_groups),
        tuple(interpreter.element_loops),
        tuple(interpreter.element_indices),
        tuple(interpreter.iterated_containers),
        _items(interpreter.iterated_from),
        _items(interpreter.peer_index),
        _slots(interpreter.slots),
    )


def _items(table: dict) -> frozenset:
    return frozenset(table.items())


def _slots(slots) -> tuple:
    return tuple(
        frozenset((k, frozenset(v)) for k, v in table.items())
        for table in (slots.by_list, slots.by_index)
    )


# the interpreter's state that a loop's run changes as it goes (and `_context` reads): the
# frame's and the scope's tables, each a dict or set kept in place
FRAME_TABLES = ("aliases", "attribute_aliases", "given_keys")
SCOPE_TABLES = (
    "element_names",
    "leaves",
    "listed",
    "param_groups",
    "iterated_from",
    "peer_index",
)
LEFT = ("obs", "slots", "iterating")  # compared apart by `_check`


def _tables(interpreter) -> dict[str, dict | set]:
    tables = {name: getattr(interpreter.frame, name) for name in FRAME_TABLES}
    tables.update((name, getattr(interpreter, name)) for name in SCOPE_TABLES)
    tables["slots.by_list"] = interpreter.slots.by_list
    tables["slots.by_index"] = interpreter.slots.by_index
    return tables


def _left(interpreter) -> dict[str, object]:
    """A copy of the tables as a run leaves them (and whether an iterable is being read: a
    loop in a call there ends that)."""
    left = {name: _deep(table) for name, table in _tables(interpreter).items()}
    left["iterating"] = interpreter.iterating
    return left


def _restore(interpreter, left: dict[str, object]) -> None:
    """Make the tables what the remembered run left, in place."""
    for name, table in _tables(interpreter).items():
        table.clear()
        table.update(_deep(left[name]))
    interpreter.iterating = left["iterating"]


def _deep(table: dict | set) -> dict | set:
    if isinstance(table, dict):
        return {k: set(v) if isinstance(v, set) else v for k, v in table.items()}
    return set(table)


# how the keys of a called function's frame start (`#2sample:t`; `#iterable3_0` is a loop's)
FRAME_KEYS = tuple(f"#{digit}" for digit in range(10))


def _visible(interpreter) -> Callable[[str], bool]:
    """Whether the code running in the current frame can read or change a key: any but
    the keys of its callers' frames (a frame less deep) that are not those of an object it
    was given (the receiver, the arguments, the items of a list it was given), which pass
    through a loop unchanged. A key of a frame as deep or deeper is the loop's to change: a
    call it makes at that depth drops such keys when it returns."""
    frame = interpreter.frame
    if not frame.prefix:
        return lambda key: True
    depth = frame.depth
    roots = {frame.self_path, *frame.aliases.values(), *frame.given_keys.values()}
    roots |= {path for paths in interpreter.listed.values() for path in paths}
    roots = tuple(r for r in roots if r is not None and r.startswith("#"))
    below = tuple(r + "." for r in roots) + tuple(r + "[" for r in roots)

    def visible(key: str) -> bool:
        return (
            not key.startswith(FRAME_KEYS)
            or _frame_depth(key) >= depth
            or key in roots
            or key.startswith(below)
        )

    return visible


def _kept_pieces(interpreter, env: Env, visible: Callable[[str], bool]) -> frozenset[tuple]:
    """The keys of the graph pieces the keys the loop cannot name hold, among those that
    crossed no enclosing loop: a piece held before the loop is not relabelled as it
    crosses the back-edge (`cross`'s `before_loop`), so a piece the loop builds again (an
    opaque one, a call's at a site a caller's value also came from) is relabelled or not
    as the callers hold it. A piece that crossed an enclosing loop keeps its label anyway."""
    enclosing = set(interpreter.loop_stack)
    return frozenset(
        g.key
        for key, value in env.items()
        if not visible(key)
        for g in value.graphs
        if g.crossed not in enclosing
    )


def _frame_depth(key: str) -> int:
    """The depth of the frame a key (`#12forward:x`) belongs to."""
    end = 1
    while key[end].isdigit():
        end += 1
    return int(key[1:end])


# where a flow's environments are, and what each of them holds besides the entry's keys
PARTS = ("normal", "continues", "breaks", "returns")
Change = tuple[dict, frozenset[str]] | None  # (keys bound anew, keys dropped); None: no flow


def _changes(flow: Flow, entry: Env, visible: Callable[[str], bool]) -> tuple[Change, ...]:
    """Each of the flow's environments as what differs from the loop's entry, in the keys
    the loop can name (a run is kept as this, not as whole environments)."""
    changes = []
    for part in PARTS:
        env = getattr(flow, part)
        if env is None:
            changes.append(None)
            continue
        bound = {k: v for k, v in env.items() if visible(k) and entry.get(k) is not v}
        changes.append((bound, frozenset(k for k in entry if k not in env)))
    return tuple(changes)


def _replayed(run: Run, env: Env) -> Flow:
    """The flow `run` left, rebuilt on the environment the loop is entered with now (its
    keys the loop can name equal to `run`'s entry; the others pass through as they are)."""
    envs = []
    for change in run.changes:
        if change is None:
            envs.append(None)
            continue
        bound, dropped = change
        rebuilt = {k: v for k, v in env.items() if k not in dropped}
        rebuilt.update(bound)
        envs.append(rebuilt)
    return Flow(*envs, run.returned)


# ---------------------------------------------------------------------------- checking
def _check(
    interpreter,
    node: ast.AST,
    earlier: Run,
    env: Env,
    replayed: Flow,
    run_loop: Callable[[Env], Flow],
) -> None:
    """Run the loop again: the flow replayed and the written keys, and nothing else
    changed."""
    line = getattr(node, "lineno", "?")
    before = _state(interpreter, earlier)
    interpreter.write_journals.append({})
    try:
        flow = run_loop(dict(env))
    finally:
        written = tuple(interpreter.write_journals.pop())
    if flow != replayed:
        raise MemoMismatch(f"loop at line {line}: another flow {_difference(flow, replayed)}")
    if set(written) != set(earlier.written):
        raise MemoMismatch(f"loop at line {line}: wrote {set(written) ^ set(earlier.written)}")
    if _left(interpreter) != earlier.left:
        raise MemoMismatch(f"loop at line {line}: left other tables")
    after = _state(interpreter)
    changed = sorted(name for name in before if before[name] != after.get(name))
    if changed:
        detail = _detail(before[changed[0]], after.get(changed[0]))
        raise MemoMismatch(f"loop at line {line}: changed {changed}: {detail}")


def _detail(before: object, after: object) -> object:
    """The first few entries where two snapshots of a table differ."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = [k for k in set(before) | set(after) if before.get(k) != after.get(k)]
        return [(k, before.get(k), after.get(k)) for k in keys[:3]]
    return (before, after)


def _difference(flow: Flow, replayed: Flow) -> list:
    """The first few keys where the loop's run and the replayed flow differ."""
    found = []
    for part in PARTS:
        ran, kept = getattr(flow, part), getattr(replayed, part)
        if ran is None or kept is None:
            if ran is not kept:
                found.append((part, "one is None"))
            continue
        found += [(part, k) for k in set(ran) | set(kept) if ran.get(k) != kept.get(k)]
    if flow.returned != replayed.returned:
        found.append(("returned",))
    return found[:5]


# the interpreter's counters and caches, which a run may add to without changing a result,
# and `_fresh_items`, which each run of a loop sets for itself before its first iteration
NOT_STATE = frozenset(
    {"statements_run", "summaries", "loop_memo", "_seen_modules", "_facts", "_fresh_items"}
)


def _state(interpreter, reused: Run | None = None) -> dict[str, object]:
    """A copy, two levels deep, of the observations and the interpreter's own state besides
    the tables `_left` copies, once what `reused` wrote and recorded is done again as a
    reuse does it."""
    if reused is not None:
        _write_again(interpreter, reused.written)
        _record_again(interpreter, reused.calls)
    state = {f"obs.{name}": _snapshot(value) for name, value in vars(interpreter.obs).items()}
    state.update(interpreter_state(interpreter))
    return state


def interpreter_state(interpreter) -> dict[str, object]:
    """A copy, two levels deep, of the interpreter's own state (its frame's too) besides
    its counters and caches, the observations and the tables `_left` copies."""
    state = {}
    for name, value in vars(interpreter).items():
        if name not in NOT_STATE and name not in SCOPE_TABLES + LEFT:
            state[name] = _snapshot(value)
    frame = vars(interpreter.frame)
    state["frame"] = _snapshot({k: v for k, v in frame.items() if k not in FRAME_TABLES})
    return state


def _snapshot(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return (type(value), _snapshot(vars(value)))
    if isinstance(value, dict):
        return {k: _shallow(v) for k, v in value.items()}
    return _shallow(value)


def _shallow(value: object) -> object:
    if isinstance(value, dict | list | set):
        return type(value)(value)
    return value


__all__ = ["LoopMemo", "MemoMismatch"]
