"""Modules an object keeps: `agent = Agent(critic)`, whose `__init__` keeps its argument
(`self.critic = critic`), makes `agent.critic` the network the code calls `critic`. An
optimizer built over `critic.parameters()` then changes the weights that `agent.value(x)`
saved (`self.critic(x)` in a method), and a trainer given `agent` and that optimizer
(`Trainer(agent, optimizer)`) steps what `self.agent.value(x)` calls.

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


@dataclass
class HeldModules:
    """What the objects built in one scope's run keep (the scope's body, and whether that is
    the module's own body, whose names are its globals)."""

    body: list[ast.stmt] = field(default_factory=list)
    module_scope: bool = False
    # (class node id, attribute) -> the name every constructor call gave it, or None
    given: dict[tuple[int, str], Holding | None] = field(default_factory=dict)
    _bindings: dict[int, collections.Counter] = field(default_factory=dict)

    def note(self, info, init: ast.AST, bound: dict, prefix: str, function) -> None:
        """A constructor call of `info`'s class, its `__init__` given `bound` (parameter ->
        (value, the caller's key)) by a frame whose locals have keys `prefix` + name, in
        `function` (None: the scope being run)."""
        for parameter, attribute in stored_parameters(init).items():
            value, key = bound.get(parameter, (None, None))
            entry = (id(info.node), attribute.removeprefix("self."))
            holding = None
            if key is not None and value is not None and shapes.is_module(value.shape):
                bare = key.removeprefix(prefix) if function is not None else key
                holding = Holding(key, bare, function)
            if entry in self.given and self.given[entry] != holding:
                holding = None  # objects of the class keep different networks
            self.given[entry] = holding

    def module_of(self, info, attribute: str, symbols) -> str | None:
        """The key of the module the objects of `info`'s class keep as `attribute`, in the
        terms of the frame that built them; None unless it is sure (see the module's
        docstring). `symbols`: the analysed module's."""
        holding = self.given.get((id(info.node), attribute))
        if holding is None or "." in holding.bare:
            return None
        if holding.function is None and not self.module_scope and holding.bare in symbols.globals:
            return None  # a function's own name and the module's too: which one is unclear
        if symbols.home(info.node).stores_attribute(attribute) != 1:
            return None
        return holding.key if self._bound_once(holding) else None

    def renames(self, bound: dict, class_of, symbols) -> dict[str, str]:
        """`Trainer(agent, optimizer)` with `agent` keeping `critic` (`module_of`): the
        callee knows the caller's `critic` as `agent.critic` (caller key -> the callee's
        path). `class_of`: the class of a value's shape."""
        renames: dict[str, str] = {}
        for parameter, (value, _) in bound.items():
            info = class_of(value.shape) if self.given else None
            for class_id, attribute in list(self.given) if info is not None else ():
                module = (
                    self.module_of(info, attribute, symbols) if class_id == id(info.node) else None
                )
                if module is not None:
                    renames.setdefault(module, f"{parameter}.{attribute}")
        return renames

    def _bound_once(self, holding: Holding) -> bool:
        """The function that named the module (or the scope) binds that name once, nested
        functions included."""
        key = id(holding.function)
        if key not in self._bindings:
            body = self.body if holding.function is None else holding.function.body
            self._bindings[key] = collections.Counter(
                node.id
                for statement in body
                for node in walk(statement)
                if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load)
            )
        return self._bindings[key].get(holding.bare, 0) == 1
