"""Modules an object keeps: `agent = Agent(critic)`, whose `__init__` keeps its argument
(`self.critic = critic`), makes `agent.critic` the network the code calls `critic`. An
optimizer built over `critic.parameters()` then changes the weights that `agent.value(x)`
saved (`self.critic(x)` in a method), and a trainer given `agent` and that optimizer
(`Trainer(agent, optimizer)`) steps what `self.agent.value(x)` calls. An optimizer an
object keeps is held the same way: `self.opt.step()` in `Trainer(model, opt).warmup(loader)`
steps the scope's `opt` (a callee is not given it under another name, as it is a network).

Told only while it is sure: every constructor call of the class in the scope being run gave
the attribute the same name, the function that names it binds that name once, and the
class's module stores the attribute nowhere else (a method that replaces it with a copy).
"""

from __future__ import annotations

import ast
import collections
from dataclasses import dataclass, field

from loopfix.model import shapes
from loopfix.model.index import walk
from loopfix.model.instances import stored_parameters


@dataclass(frozen=True)
class Holding:
    """The name a constructor call gave a kept attribute."""

    key: str  # the name's key in the frame that called the constructor (`#1main:critic`)
    bare: str  # the name as that frame's code spells it (`critic`)
    function: ast.AST | None  # the function whose frame it was (None: the scope being run)
    entry: int | None = None  # id of the call that entered that function
    optimizer: bool = False  # an optimizer kept (`self.opt = opt`), not a network


@dataclass
class HeldModules:
    """What the objects built in one scope's run keep (the scope's body, and whether that is
    the module's own body, whose names are its globals)."""

    body: list[ast.stmt] = field(default_factory=list)
    module_scope: bool = False
    # (class node id, attribute) -> the name every constructor call gave it, or None
    given: dict[tuple[int, str], Holding | None] = field(default_factory=dict)
    _bindings: dict[int, collections.Counter] = field(default_factory=dict)

    def note(
        self, info, init: ast.AST, bound: dict, prefix: str, function, entry, in_loop: bool
    ) -> None:
        """A constructor call of `info`'s class, its `__init__` given `bound` (parameter ->
        (value, the caller's key)) by a frame whose locals have keys `prefix` + name, in
        `function` (None: the scope being run) entered by the call `entry`. In a loop, or
        in a function the scope may call more than once (`build()` twice: a second call
        may not even run, its summary standing for it), each pass builds another object: no
        holding is sure."""
        sure = not in_loop and (function is None or self._called_once(function))
        for parameter, attribute in stored_parameters(init).items():
            value, key = bound.get(parameter, (None, None))
            slot = (id(info.node), attribute.removeprefix("self."))
            holding = None
            if key is not None and sure and value is not None and _kept(value.shape):
                bare = key.removeprefix(prefix) if function is not None else key
                entered = id(entry) if entry is not None else None
                optimizer = shapes.is_optimizer(value.shape)
                holding = Holding(key, bare, function, entered, optimizer)
            if slot in self.given and self.given[slot] != holding:
                holding = None  # objects of the class keep different networks
            self.given[slot] = holding

    def module_of(self, info, attribute: str, symbols, seen) -> str | None:
        """The key of the module the objects of `info`'s class keep as `attribute`, in the
        terms of the frame that built them; None unless it is sure (see the module's
        docstring). `symbols`: the analysed module's; `seen`: every module the analysis
        looked into, none of which may store the attribute again (a helper that replaces
        it with a copy, a base class that does)."""
        holding = self.given.get((id(info.node), attribute))
        if holding is None or "." in holding.bare:
            return None
        if holding.function is None and not self.module_scope and holding.bare in symbols.globals:
            return None  # a function's own name and the module's too: which one is unclear
        stores = [module.stores_attribute(attribute) for module in seen]
        if None in stores or sum(stores) != 1:
            return None
        return holding.key if self.bound_once(holding.bare, holding.function) else None

    def renames(self, bound: dict, class_of, symbols, seen) -> dict[str, str]:
        """`Trainer(agent, optimizer)` with `agent` keeping `critic` (`module_of`): the
        callee knows the caller's `critic` as `agent.critic` (caller key -> the callee's
        path). `class_of`: the class of a value's shape."""
        renames: dict[str, str] = {}
        for parameter, (value, _) in bound.items():
            info = class_of(value.shape) if self.given else None
            for class_id, attribute in list(self.given) if info is not None else ():
                holding = self.given[(class_id, attribute)]
                if class_id != id(info.node) or (holding is not None and holding.optimizer):
                    continue  # an optimizer is not a network the callee calls
                module = self.module_of(info, attribute, symbols, seen)
                if module is not None:
                    renames.setdefault(module, f"{parameter}.{attribute}")
        return renames

    def _called_once(self, function) -> bool:
        """The scope's body names `function` in one call, outside every loop, and no other
        code does (`main()` under `if __name__ == "__main__":`)."""
        calls = [
            node
            for statement in self.body
            for node in walk(statement)
            if isinstance(node, ast.Call) and _called_name(node.func) == function.name
        ]
        return len(calls) == 1 and id(calls[0]) not in _in_loops(self.body)

    def keeps(self, name: str, function: ast.AST | None, line: int) -> bool:
        """`function` (None: the scope being run) binds `name` nowhere, or once, outside
        every loop, on a line before `line`: from `line` on, the name holds what it held
        there (`D = netD` is netD's network while no later `netD = copy.deepcopy(netD)`
        makes netD another one)."""
        body = self.body if function is None else function.body
        looped = _in_loops(body)
        lines = [
            2**31 if id(node) in looped else node.lineno
            for statement in body
            for node in walk(statement)
            if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load) and node.id == name
        ]
        return not lines or (len(lines) == 1 and lines[0] < line)

    def bound_once(self, name: str, function: ast.AST | None) -> bool:
        """`function` (None: the scope being run) binds `name` once, nested functions
        included, and not inside a loop (where each pass binds it anew)."""
        key = id(function)
        if key not in self._bindings:
            body = self.body if function is None else function.body
            looped = _in_loops(body)
            counts: collections.Counter = collections.Counter()
            for statement in body:
                for node in walk(statement):
                    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
                        counts[node.id] += 2 if id(node) in looped else 1  # looped: never once
            self._bindings[key] = counts
        return self._bindings[key].get(name, 0) == 1


def _kept(shape) -> bool:
    """A network, or an optimizer (`Trainer(model, opt)` keeping `self.opt`: its steps in a
    method step the scope's `opt`)."""
    return shapes.is_module(shape) or shapes.is_optimizer(shape)


def _called_name(func: ast.expr) -> str | None:
    """`build` of `build()` and of `self.build()`."""
    return func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)


def _in_loops(body: list[ast.stmt]) -> set[int]:
    """Ids of the nodes of `body` inside a `for` or `while` loop."""
    return {
        id(inner)
        for statement in body
        for node in walk(statement)
        if isinstance(node, ast.For | ast.AsyncFor | ast.While)
        for inner in walk(node)
        if inner is not node
    }
