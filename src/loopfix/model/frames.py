"""What the interpreter records (`Observations`) and where it is (`Frame`, `Call`)."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from loopfix.model import shapes
from loopfix.model.graphs import BackwardSite, CarriedGraph, Env, UpdateSite, Value
from loopfix.model.symbols import ClassInfo, FunctionNode


@dataclass(frozen=True)
class Effect:
    """One thing a called function did that its caller's statement is answerable for: the
    caller is where a fix goes (`trainer.update_learning_rate()` is moved, `meter.update(loss)`
    is given the loss detached), and what the callee did is the evidence.

    - "schedule": it stepped a learning-rate scheduler built on the optimizer at `target`, on
      every call (`given`: with arguments, as `ReduceLROnPlateau.step(metric)`);
    - "step": it stepped the optimizer at `target`, which the scope being run may have
      named otherwise (`known_as`: `opt` for the `self.opt` of `Trainer(model, opt)`);
    - "accumulate": it added `argument` (the caller's argument carrying the graph) to the
      total or list at `target` (`self.sum += val * n` in `meter.update(loss, n)`) in the
      caller's loop `loop_id`;
    - "keeps": a method of the object at `target` ran and did (`handed_on`) or did not hand
      any graph the object or its arguments held to anything but the object itself.
    """

    kind: str
    statement: ast.stmt  # the caller's statement
    call: ast.Call  # the callee's step call ("schedule", "step"), else the caller's call
    target: str | None
    given: bool = False
    argument: ast.expr | None = None
    loop_id: int | None = None
    handed_on: bool = False
    known_as: str | None = None


@dataclass
class Observations:
    """What the interpreter saw, shared by every scope of one module."""

    loops: dict[int, ast.For | ast.While | ast.AsyncFor] = field(default_factory=dict)
    backwards: dict[int, BackwardSite] = field(default_factory=dict)
    signatures: dict[int, frozenset] = field(default_factory=dict)
    reached_consumers: dict[int, set[int]] = field(default_factory=dict)
    # backward id -> backwards whose freed (not retained) graph it goes through again
    freed_reaches: dict[int, set[int]] = field(default_factory=dict)
    # backward id -> site -> the items of an unseen module's output it reached it through
    backward_items: dict[int, dict[tuple, set]] = field(default_factory=dict)
    # backward id -> optimizer steps that changed weights its graph saved
    stale_reaches: dict[int, set[int]] = field(default_factory=dict)
    updates: dict[int, UpdateSite] = field(default_factory=dict)
    # backward id -> module paths whose graph it goes through (None: a module it cannot name)
    backward_modules: dict[int, set[str | None]] = field(default_factory=dict)
    # every path a module-call site is known by (a caller and the callee may name it apart)
    site_modules: dict[tuple[int, ...], set[str | None]] = field(default_factory=dict)
    # module-call sites whose result is the module's own parameter (`return self.weight`):
    # they reach its weights and keep nothing, so no step makes them stale
    leaf_sites: set[tuple[int, ...]] = field(default_factory=set)
    # backwards whose retained graph is still held when its scope ends (returned, on self)
    escaping: set[int] = field(default_factory=set)
    # backwards run where a split assumed a setting takes one of its listed values
    listed_backwards: set[int] = field(default_factory=set)
    # backwards whose loss has no graph loopfix can see, or some of unknown origin
    partly_unknown: set[int] = field(default_factory=set)
    # reads of other elements of a per-element list inside the loop over its elements
    # (`outputs[j]` in deep mutual learning): expression nodes, by id
    # values with graph added to a container or a total in a loop: (statement, the added
    # expression, the container's key, the loop's id)
    accumulations: list[tuple] = field(default_factory=list)
    # `self.total += loss` in a method of the same object called in a loop (`self.step(x)`
    # in `train`), adding a value whose every graph a backward already freed: (the loop's
    # statement that calls it, the statement in the method, the added expression, the
    # total's key in the caller's terms, the loop's id)
    called_totals: list[tuple] = field(default_factory=list)
    # `scheduler.step()` calls: (call, statement, the optimizer's path, given arguments)
    scheduler_steps: list[tuple] = field(default_factory=list)
    peer_reads: dict[int, ast.expr] = field(default_factory=dict)
    peer_owners: dict[int, str | None] = field(default_factory=dict)  # the loop's own index
    carried: dict[tuple[int, str], CarriedGraph] = field(default_factory=dict)
    # loop id -> keys of the graph pieces its loop-carried names hold (`h` in `out, h =
    # cell(x, h)`): every element a container gathered in that loop shares them
    chained: dict[int, set[tuple]] = field(default_factory=dict)
    writers: dict[tuple[int, str], list[ast.stmt]] = field(default_factory=dict)
    # id of a statement of the scope being run -> the backwards and updates that calls in it
    # ran in functions of the file: ("backward" | "update", id, modules as the scope names
    # them, for an update), in order
    events_within: dict[int, list[tuple]] = field(default_factory=dict)
    # (statement id, update id) of those updates that run whenever the statement runs: each
    # call on the way a whole statement of its function's body, after nothing that may leave
    every_call: set[tuple[int, int]] = field(default_factory=set)
    # backward id -> statements of a calling scope through which it reached a freed or stale
    # graph (the backward sits in a helper; the fix goes where the helper is called)
    reach_anchors: dict[int, list[ast.stmt]] = field(default_factory=dict)
    # id of a statement of the scope being run -> the module paths its forwards call (also
    # through functions it calls)
    statement_modules: dict[int, set[str | None]] = field(default_factory=dict)
    shapes_before: dict[int, dict] = field(default_factory=dict)
    shapes_after: dict[int, dict] = field(default_factory=dict)
    # id of a statement of the scope being run -> what the functions of the file (or of the
    # project) that it calls did there, in its own terms (`Effect`), in order
    effects: dict[int, list[Effect]] = field(default_factory=dict)

    def note_shapes(self, table: dict[int, dict], statement: ast.stmt, env: Env | None) -> None:
        """Join each name's shape in `env` into what `table` saw at `statement` (`#` keys
        are a callee's locals). Run for every statement of a scope, each time a loop
        round reaches it: the first visit copies, later ones join only what changed."""
        if env is None:
            return
        seen = table.get(id(statement))
        if seen is None:
            table[id(statement)] = {k: v.shape for k, v in env.items() if "#" not in k}
            return
        join = shapes.join
        for key, value in env.items():
            shape = value.shape
            old = seen.get(key)
            if old is not shape and "#" not in key:
                seen[key] = join(old, shape)


@dataclass
class Call:
    """A call into a function defined in the analysed file."""

    function: FunctionNode
    positional: list[tuple[Value, str | None]]
    keywords: dict[str | None, tuple[Value, str | None]]
    receiver_key: str | None
    cls: ClassInfo | None
    site: tuple[int, ...]
    # the call site's literal keywords (`retain_graph=True`), for a `**kwargs` the callee
    # passes on to `backward(**kwargs)`
    passed: dict[str, ast.expr] = field(default_factory=dict)
    # the literal each parameter the body tests and never binds again has at this call
    # (`mode="ce"`, a literal default): `if mode == "l2":` is decided here
    literals: dict[str, object] = field(default_factory=dict)

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
    # a called function's own names; any other name it reads is the module's (None: the
    # scope being run, whose names are all its own)
    locals: frozenset[str] | None = None
    # the function's `**kwargs` parameter and the keywords its call site gave it
    var_keywords: str | None = None
    passed: dict[str, ast.expr] = field(default_factory=dict)
    literals: dict[str, object] = field(default_factory=dict)  # `Call.literals`
    # names `aliases` holds because they were bound to an attribute (`model = self.model`)
    attribute_aliases: set[str] = field(default_factory=set)
    # parameter -> the caller's key of the variable it was given (`detach_(state)`): a
    # change in place of the object reaches the caller's variable
    given_keys: dict[str, str] = field(default_factory=dict)
    # names bound once to a method of a project object (`act = agent.act`): called, the
    # method runs on that object
    method_aliases: dict[str, ast.Attribute] = field(default_factory=dict)
    # functions this frame's function defines in its body (`def zero_grad_all():` in
    # `train()`), by name, once their `def` has run: a call of one runs it as a closure
    nested: dict[str, FunctionNode] = field(default_factory=dict)
    # a closure's names that are the enclosing function's (not its own, not the module's),
    # with the keys the enclosing frame gives them
    enclosing: dict[str, str] = field(default_factory=dict)

    def given_key(self, key: str) -> str | None:
        """The caller's key for this frame's parameter `key` (prefixed), else None."""
        if not self.prefix or not key.startswith(self.prefix):
            return None
        return self.given_keys.get(key[len(self.prefix) :])

    @property
    def is_top(self) -> bool:
        return self.depth == 0
