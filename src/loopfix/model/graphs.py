"""Abstract values: which pieces of autograd graph a value keeps alive, and its shape.

A `Graph` stands for the part of an autograd graph built by one module call (its *site*). It
remembers whether it was carried over a loop's back-edge (`crossed`, `via`) and whether a
backward already went through it (`consumed_by`). A backward that reaches a graph which was
consumed in an earlier iteration of an enclosing loop and then carried into this one is exactly
"Trying to backward through the graph a second time" (or, with `retain_graph=True`, the
in-place version error once an optimizer has stepped).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from loopfix.model import shapes
from loopfix.model.shapes import Shape

OPAQUE_SITE: tuple = ("opaque",)
# the first element of the site of a graph standing for a function's argument while its
# summary is computed (`summaries`)
PLACEHOLDER = -7_000_000
# the last element of the site of a graph built by a module whose `forward` loopfix cannot
# see: which items of its output share which parts of its graph is unknown
UNSEEN_FORWARD = -7_100_000


@dataclass(frozen=True)
class Graph:
    site: tuple[int, ...]
    crossed: int | None = None
    via: str | None = None
    consumed_by: int | None = None  # the first backward that went through it
    consumers: frozenset[int] = frozenset()  # every backward that went through it
    retained: bool = False  # every consumer kept it (retain_graph=True)
    freed_by: int | None = None  # the first consumer that did not keep it
    stale_by: int | None = None  # an optimizer step changed the weights this graph saved
    # the item of an unseen module's output this reference came through (`item_graph`); the
    # piece is the whole output's all the same (`key`): a backward frees it for every item
    item: object = None

    @property
    def opaque(self) -> bool:
        """Graph of unknown origin (a parameter, a closure variable, an unknown call's result):
        it may be shared with code loopfix does not see, so it never proves anything."""
        return self.site == OPAQUE_SITE

    @property
    def key(self) -> tuple:
        """Identity of the graph piece for freeing: whichever variable carries it, one
        backward frees it for all of them."""
        return (self.site, self.crossed)

    @property
    def route(self) -> tuple:
        """The piece and the variable it came through: what a backward's signature lists."""
        return (self.site, self.crossed, self.via)

    def consume(self, backward_id: int, retained: bool) -> Graph:
        """Another backward went through this piece. Every consumer is remembered, so that a
        retained graph is known to be needed by each later backward that reaches it."""
        if backward_id in self.consumers:
            return self
        first = self.consumed_by is None
        return Graph(  # the constructor, not `dataclasses.replace`: a hot path
            site=self.site,
            crossed=self.crossed,
            via=self.via,
            consumed_by=backward_id if first else self.consumed_by,
            consumers=self.consumers | {backward_id},
            retained=retained if first else self.retained and retained,
            freed_by=self.freed_by if self.freed_by is not None or retained else backward_id,
            stale_by=self.stale_by,
            item=self.item,
        )

    def go_stale(self, step_id: int) -> Graph:
        if self.stale_by is not None:
            return self
        return Graph(
            site=self.site,
            crossed=self.crossed,
            via=self.via,
            consumed_by=self.consumed_by,
            consumers=self.consumers,
            retained=self.retained,
            freed_by=self.freed_by,
            stale_by=step_id,
            item=self.item,
        )

    def carry(self, loop_id: int, via: str, enclosing: tuple[int, ...]) -> Graph:
        """Cross `loop_id`'s back-edge in `via`. A piece that already crossed this loop keeps
        the variable it first crossed in (the state to blame and to detach); one that crossed
        an enclosing loop keeps that label, which is the older and more telling one."""
        if self.crossed == loop_id or self.crossed in enclosing:
            return self
        return Graph(
            site=self.site,
            crossed=loop_id,
            via=via,
            consumed_by=self.consumed_by,
            consumers=self.consumers,
            retained=self.retained,
            freed_by=self.freed_by,
            stale_by=self.stale_by,
            item=self.item,
        )


@dataclass(frozen=True)
class Value:
    graphs: frozenset[Graph] = frozenset()
    shape: Shape = None
    # a tuple built item by item (`return x, state`): the graphs of each item, so that
    # unpacking it gives each name its own (None: every item may hold any of `graphs`)
    parts: tuple[frozenset[Graph], ...] | None = None
    # a list of tuples appended item by item (`self.data.append((reward, prob))`): the
    # graphs each position of an item may hold, so that `for r, prob in self.data` gives `r`
    # only what rewards hold
    item_parts: tuple[frozenset[Graph], ...] | None = None
    # a tuple built from items that hold parts of their own (`return SACLosses(...), stats`):
    # each item's `parts` (None for an item without), so that unpacking it (`losses, stats =
    # ...`) gives the record back its fields' graphs
    inner: tuple[tuple[frozenset[Graph], ...] | None, ...] | None = None

    def with_shape(self, shape: Shape) -> Value:
        return Value(self.graphs, shape)

    def map_graphs(self, change) -> Value:
        """This value with `change(graph)` in place of each graph, item by item too."""
        parts = items = inner = None
        if self.parts is not None:
            parts = tuple(frozenset(map(change, part)) for part in self.parts)
        if self.item_parts is not None:
            items = tuple(frozenset(map(change, part)) for part in self.item_parts)
        if self.inner is not None:
            inner = tuple(
                None if item is None else tuple(frozenset(map(change, p)) for p in item)
                for item in self.inner
            )
        return Value(frozenset(map(change, self.graphs)), self.shape, parts, items, inner)

    def part(self, index: int, count: int) -> frozenset[Graph]:
        """The graphs item `index` of `count` unpacked items may hold."""
        if self.parts is not None and len(self.parts) == count:
            return self.parts[index]
        return self.graphs


def keyed_graph(graph: Graph, key: object) -> Graph:
    """`graph` as the entry `key` of a dict whose entries the model cannot tell apart holds
    it (`dict(zip(names, losses))["D_fake"]`): another key's entry may hold other tensors,
    so a backward that went through one key's graphs is not taken to have freed what a
    backward through another key's needs (`EventsMixin._through_another_item`); consumption
    and carrying stay the graph's, whatever key it is read under; a step's change of the graph
    proves no version error through it (`is_entry`). A graph read through an item already,
    or of unknown origin, is returned as is."""
    if graph.item is not None or graph.opaque:
        return graph
    return dataclasses.replace(graph, item=("entry", key))


def is_entry(graph: Graph) -> bool:
    """Whether `graph` was read as an entry of a dict whose entries are not told apart."""
    return isinstance(graph.item, tuple) and graph.item[:1] == ("entry",)


def dict_entry(base: Value, key: object) -> Value:
    """Entry `key` of a dict value (`base.shape` is `("dict", entries)`): a key written in
    the literal has its own graphs; any other key, one of the spread dicts' (`{**d, "g":
    loss_g}`) or of a dict built from pairs the model cannot read (`dict(zip(names,
    losses))`), whose graphs it holds as that key's (`keyed_graph`)."""
    entries = base.shape[1]
    keys = [k for k, _ in entries]
    if key not in keys:
        if "**" in keys:  # not written after the last `**`
            graphs = base.part(len(keys) - 1, len(keys))
            return Value(frozenset(keyed_graph(g, key) for g in graphs), shapes.UNKNOWN)
        return base.with_shape(shapes.UNKNOWN)
    position = keys.index(key)
    return Value(base.part(position, len(keys)), entries[position][1])


# a dict whose entries are not known one by one (`dict(zip(names, losses))`, a dict
# comprehension): every key is one of its `**` entry's
UNKNOWN_ENTRIES = ("dict", (("**", shapes.UNKNOWN),))


def item_graph(graph: Graph, key: object) -> Graph:
    """The reference item `key` (an int position or a constant key) of the output of a
    module whose forward loopfix cannot see holds to its graph. Which items share which
    saved tensors is unknown (an actor-critic network's `out["v"]` and `out["log_pi"]` may
    share nothing), so a backward that went through one item is not taken to have freed
    what a backward through another needs (`EventsMixin.backward`); consumption, staleness
    and carrying stay the whole output's. Any other graph is returned as is."""
    if not graph.site or graph.site[-1] != UNSEEN_FORWARD or graph.item is not None:
        return graph
    return dataclasses.replace(graph, item=key)


EMPTY = Value()
OPAQUE = Value(frozenset({Graph(OPAQUE_SITE)}))

Env = dict[str, Value]


def join_values(a: Value | None, b: Value | None) -> Value | None:
    if a is None or a is b:
        return b
    if b is None:
        return a
    parts = _join_parts(a.parts, b.parts, a.graphs, b.graphs)
    items = _join_parts(a.item_parts, b.item_parts, a.graphs, b.graphs)
    inner = _join_inner(a, b) if parts is not None else None
    return Value(a.graphs | b.graphs, shapes.join(a.shape, b.shape), parts, items, inner)


def _join_inner(a: Value, b: Value):
    """Each item's own parts, joined position by position (`Value.inner`); a side without
    graph adds nothing."""
    if a.inner == b.inner:
        return a.inner
    if not b.graphs:
        return a.inner
    if not a.graphs:
        return b.inner
    if a.inner is None or b.inner is None or len(a.inner) != len(b.inner):
        return None
    joined = []
    for x, y, gx, gy in zip(a.inner, b.inner, a.parts, b.parts, strict=True):
        joined.append(_join_parts(x, y, gx, gy))
    return tuple(joined)


def _join_parts(a, b, a_graphs: frozenset, b_graphs: frozenset):
    """Positions joined one by one; a side without graph adds nothing to any position."""
    if a is not None and b is not None and len(a) == len(b):
        return tuple(x | y for x, y in zip(a, b, strict=True))
    if a is not None and b is None and not b_graphs:
        return a
    if b is not None and a is None and not a_graphs:
        return b
    return None


def union(values) -> frozenset[Graph]:
    result: frozenset[Graph] = frozenset()
    for value in values:
        result |= value.graphs
    return result


# suffix of the env key that keeps a per-element list as its other elements' readers see it
PEERS = "#peers"


def join_envs(a: Env | None, b: Env | None) -> Env | None:
    if a is None:
        return None if b is None else dict(b)
    if b is None:
        return dict(a)
    # a key on one side only keeps its value, and so does a value both sides share (what
    # `join_values` with `EMPTY` or with itself gives, without building it again)
    joined = dict(a)
    for key, value in b.items():
        old = joined.get(key)
        if old is None:
            joined[key] = value
        elif old is not value:
            joined[key] = join_values(old, value)
    return joined


@dataclass
class Flow:
    """Where control goes after a block: on, to the loop head, out of the loop, or returns."""

    normal: Env | None
    continues: Env | None = None
    breaks: Env | None = None
    returns: Env | None = None
    returned: Value | None = None

    def then(self, after: Flow) -> Flow:
        """This flow followed by `after`, which ran on this flow's `normal` environment."""
        return Flow(
            normal=after.normal,
            continues=join_envs(self.continues, after.continues),
            breaks=join_envs(self.breaks, after.breaks),
            returns=join_envs(self.returns, after.returns),
            returned=join_values(self.returned, after.returned),
        )

    def join(self, other: Flow) -> Flow:
        return Flow(
            normal=join_envs(self.normal, other.normal),
            continues=join_envs(self.continues, other.continues),
            breaks=join_envs(self.breaks, other.breaks),
            returns=join_envs(self.returns, other.returns),
            returned=join_values(self.returned, other.returned),
        )


@dataclass
class BackwardSite:
    """One call that runs a backward pass (`loss.backward()`, `torch.autograd.grad`, ...)."""

    id: int
    call: object
    statement: object | None
    retain: bool | None
    retain_keyword: object | None
    loops: tuple[int, ...]


@dataclass
class UpdateSite:
    """`opt.step()` / `scaler.step(opt)` or a `zero_grad()`, with the modules it touches."""

    id: int
    kind: str  # "step" or "zero_grad"
    call: object
    statement: object | None
    target: str | None  # the optimizer's (or module's) variable
    modules: frozenset[str] | None  # module paths whose parameters it updates or zeroes
    loops: tuple[int, ...]


@dataclass
class CarriedGraph:
    """A variable that carries an already-consumed graph over a loop's back-edge."""

    loop_id: int
    var: str
    consumers: set[int] = field(default_factory=set)
    failing: set[int] = field(default_factory=set)
    retained: bool = False
