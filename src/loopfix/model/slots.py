"""Items of a local list stored and read back by the same index name.

The model keeps a list as one value: every graph any of its items holds. Training code that
writes one item per pass and reads it back at once (`losses[i] = mse(model(x[i]), y[i])`
then `(losses[i] / n).backward()`, continual learning's per-context losses) would otherwise
backward the graphs of the items earlier passes stored, which their own backwards freed:
a graph "carried" from one pass to the next that the code never reads again.

So an item stored into a list of the running scope's own under a name (`xs[i] = value`, not
`xs[i] += value`, nor `xs[0]` or `self.xs[i]`) is kept as that item, under its own key in
the environment (`xs[=i]`), and a read of `xs[i]` gives it back while neither the list nor
the index has changed since. The list has changed when its value in the environment is no
longer the value the store left (anything else done to it makes a new value: another item
stored, `append`, a backward or a step that changed a graph it holds, the join of two paths
of which only one stored the item); it is also forgotten when the list is handed to code
that may reorder or write it (`random.shuffle(xs)`, `alias = xs`, `xs.pop(0)`, `del xs[0]`,
`xs.clear()`). The index has changed when it is bound again: each binding of an index name
is a new value, so a join with a path that rebound it does not look unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from loopfix.model.graphs import Env, Value

SLOT = "[="  # the key of an item: `f"{list key}[={index key}]"`, below the list's own key


@dataclass
class ItemSlots:
    """The items stored by index name in one interpreter's run, by list and by index."""

    by_list: dict[str, set[str]] = field(default_factory=dict)  # list key -> its item keys
    by_index: dict[str, set[str]] = field(default_factory=dict)  # index key -> item keys
    # item key -> the list's and the index's values just after the item was stored
    stored_with: dict[str, tuple[Value, Value]] = field(default_factory=dict)

    def store(self, key: str, index_key: str | None, value: Value, env: Env) -> None:
        """`xs[i] = value` was just bound into the list at `key` (its value in `env`)."""
        index = env.get(index_key) if index_key is not None else None
        if index is None:  # an index the scope does not bind: nothing to compare later
            return
        slot = f"{key}{SLOT}{index_key}]"
        env[slot] = value
        self.by_list.setdefault(key, set()).add(slot)
        self.by_index.setdefault(index_key, set()).add(slot)
        self.stored_with[slot] = (env[key], index)

    def read(self, key: str, index_key: str | None, env: Env) -> Value | None:
        """The item `xs[i]` holds, when stored by this index into this list as it still is;
        else None (the read takes the whole list's graphs)."""
        slot = f"{key}{SLOT}{index_key}]"
        value = env.get(slot)
        if value is None:
            return None
        container, index = self.stored_with[slot]
        if env.get(key) is not container or env.get(index_key) is not index:
            return None
        return value

    def forget(self, key: str, env: Env) -> None:
        """The list at `key` may have changed where the model does not follow it."""
        for slot in self.by_list.get(key, ()):
            env.pop(slot, None)

    def rebound_index(self, index_key: str, value: Value, env: Env) -> Value:
        """The index name is bound again: its items are forgotten, and the value it is bound
        to is a new object, so that no path that rebound it joins into the same value."""
        for slot in self.by_index[index_key]:
            env.pop(slot, None)
        return Value(value.graphs, value.shape, value.parts, value.item_parts)
