"""Expressions: the abstract value of each expression, with its side effects on the env."""

from __future__ import annotations

import ast

from loopfix.model import shapes
from loopfix.model.calls import _BUILTIN_NAMES, GRAPH_FREE_ATTRIBUTES, INDEXED_RESULT, is_text
from loopfix.model.counters import int_constant
from loopfix.model.graphs import (
    EMPTY,
    OPAQUE,
    UNKNOWN_ENTRIES,
    UNSEEN_FORWARD,
    Env,
    Graph,
    Value,
    dict_entry,
    item_graph,
    join_values,
    union,
)
from loopfix.model.index import child_nodes, walk
from loopfix.model.instances import self_shape
from loopfix.model.shapes import NONE, OTHER, TENSOR, UNKNOWN
from loopfix.model.symbols import dotted_name

# operators whose backward keeps the other operand to give an operand its gradient: a weight
# written by hand used in one builds a graph with a saved tensor, which a backward frees
SAVING_OPERATORS = (ast.MatMult, ast.Mult, ast.Div)


class ExpressionsMixin:
    """Expressions, for `Interpreter`."""

    def eval(self, node: ast.expr | None, env: Env) -> Value:
        if node is None:
            return EMPTY
        handler = getattr(self, f"expr_{type(node).__name__}", None)
        if handler is not None:
            value = handler(node, env)
        else:
            children = [self.eval(c, env) for c in child_nodes(node) if _is_expr(c)]
            value = Value(union(children), UNKNOWN)
        return Value(frozenset(), value.shape) if self.no_grad and not _is_alias(node) else value

    def expr_Yield(self, node: ast.Yield | ast.YieldFrom, env: Env) -> Value:
        """`yield out`: the consumer holds what is yielded, and may backpropagate it; a
        graph kept by `retain_graph=True` before is not needlessly kept (LF004). What the
        consumer sends back is not known."""
        value = self.eval(node.value, env)
        self.obs.escaping |= {c for g in value.graphs if g.retained for c in g.consumers}
        self.yielded |= {g.key for g in value.graphs if not g.opaque}
        return OPAQUE

    expr_YieldFrom = expr_Yield

    def expr_Constant(self, node: ast.Constant, env: Env) -> Value:
        return EMPTY.with_shape(NONE if node.value is None else OTHER)

    def expr_Name(self, node: ast.Name, env: Env) -> Value:
        key = self.key_for(node)
        if key in env:
            peers = self.peer_view(key, node, env) if key is not None else None
            return env[key] if peers is None else peers
        if node.id == "self" and self.frame.cls is not None:
            return EMPTY.with_shape(self_shape(self.frame.cls))
        if node.id in self.symbols.globals:
            own = self.symbols is self.instances.symbols  # not a global of another module
            shape = self.instances.module_shapes.get(node.id) if own else None
            if shape is None:
                shape = self.symbols.static_shape(self.symbols.globals[node.id])
            return EMPTY.with_shape(shape)
        if self._is_known_name(node.id):
            return EMPTY
        return OPAQUE  # a closure variable or a name bound elsewhere: origin unknown

    def expr_Attribute(self, node: ast.Attribute, env: Env) -> Value:
        key = self.key_for(node)
        if key is not None and key in env:
            return env[key]
        base = self.eval(node.value, env)
        shape = base.shape
        if isinstance(shape, tuple) and shape[0] == "record" and node.attr in shape[1]:
            index = shape[1].index(node.attr)  # `losses.alpha_loss` of a namedtuple
            graphs = base.parts[index] if base.parts is not None else base.graphs
            return Value(graphs, shape[2][index])
        if shape == INDEXED_RESULT and node.attr in ("values", "indices"):
            # `out.max(1).indices` (`torch.return_types`): only the values carry the graph
            return Value(base.part(0, 2) if node.attr == "values" else frozenset(), TENSOR)
        if node.attr in GRAPH_FREE_ATTRIBUTES:
            return EMPTY.with_shape(TENSOR if node.attr in {"data", "grad"} else OTHER)
        if node.attr == "module" and shapes.is_module(base.shape):
            return base  # `model.module`: what DataParallel / DDP wrap
        info = self.class_of(base.shape)
        if info is not None:
            built = self.instances.attributes(info).get(node.attr)
            if built is not None:
                return self._as_seen_from(built, self.key_for(node.value))
        return Value(base.graphs, None)

    @staticmethod
    def _as_seen_from(value: Value, receiver: str | None) -> Value:
        """An instance attribute's value (paths say `self.`) seen through `receiver`."""
        if receiver == "self":
            return value
        if receiver is None:
            return value.with_shape(shapes.keep_paths(value.shape, set()))
        return value.with_shape(shapes.rename_paths(value.shape, {"self": receiver}))

    def expr_Subscript(self, node: ast.Subscript, env: Env) -> Value:
        key = self.key_for(node.value) if isinstance(node.value, ast.Name) else None
        if key is not None and key in self.slots.by_list and isinstance(node.slice, ast.Name):
            stored = self.slots.read(key, self.key_for(node.slice), env)
            if stored is not None:  # `losses[i]` just after `losses[i] = ...`
                self.eval(node.slice, env)
                return stored
        if key is not None and key in env:  # an element of a list: this one's, or a peer's
            base = self.peer_view(key, node, env) or env[key]
        else:
            base = self.eval(node.value, env)
        self.eval(node.slice, env)
        shape = base.shape
        index = node.slice
        position = int_constant(index)
        if (
            isinstance(shape, tuple)
            and shape[0] == "tuple"
            and position is not None
            and -len(shape[1]) <= position < len(shape[1])
        ):
            position = position % len(shape[1])
            return Value(base.part(position, len(shape[1])), shape[1][position])
        if isinstance(index, ast.Slice):
            if index.lower is None and index.upper is None and index.step is None:
                return base  # `t[:]`: every item where it was
            return _sliced(base, index) or _without_positions(base)
        if (
            isinstance(shape, tuple)
            and shape[0] == "seq"
            and base.parts is not None
            and isinstance(index, ast.Constant)
            and isinstance(index.value, int)
            and -len(base.parts) <= index.value < len(base.parts)
        ):
            # `memory[1]` of `memory = [pred, h.detach()]`: that entry's graphs (and any the
            # list gained without a known position), not its neighbours'
            unplaced = base.graphs - frozenset().union(*base.parts)
            graphs = base.parts[index.value % len(base.parts)] | unplaced
            return Value(graphs, shapes.item_shape(shape))
        if isinstance(shape, tuple) and shape[0] == "dict" and isinstance(index, ast.Constant):
            return dict_entry(base, index.value)
        if isinstance(index, ast.Constant) and base.parts is None:
            return Value(self.item_graphs(base.graphs, index.value), shapes.item_shape(shape))
        return base.with_shape(shapes.item_shape(shape))

    def item_graphs(self, graphs: frozenset[Graph], key: object) -> frozenset[Graph]:
        """`graphs` as item `key` of a value holds them: a reference to the output of a
        module whose forward loopfix cannot see remembers the item (`item_graph`)."""
        if not any(g.site and g.site[-1] == UNSEEN_FORWARD for g in graphs):
            return graphs
        return frozenset(item_graph(g, key) for g in graphs)

    def expr_Tuple(self, node: ast.Tuple, env: Env) -> Value:
        items = [self.eval(e, env) for e in node.elts]
        parts = None if any(isinstance(e, ast.Starred) for e in node.elts) else items
        inner = None
        if parts is not None and any(i.parts is not None for i in items):
            inner = tuple(i.parts for i in items)  # `return SACLosses(...), stats`
        return Value(
            union(items),
            ("tuple", tuple(i.shape for i in items)),
            tuple(i.graphs for i in parts) if parts is not None else None,
            inner=inner,
        )

    def expr_List(self, node: ast.List, env: Env) -> Value:
        items = [self.eval(e, env) for e in node.elts]
        if any(_is_trainer_object(i.shape) for i in items) and not any(
            isinstance(e, ast.Starred) for e in node.elts
        ):  # [opt_g, opt_d]: indexable like a tuple, each optimizer kept apart
            return Value(union(items), ("tuple", tuple(i.shape for i in items)))
        # each item's graphs too (unpacked `a, b = [x, y]`, appended `data.append([r, p])`)
        parts = (
            None
            if any(isinstance(e, ast.Starred) for e in node.elts)
            else (tuple(i.graphs for i in items))
        )
        return Value(union(items), ("seq", shapes.join_all(i.shape for i in items)), parts)

    def expr_Dict(self, node: ast.Dict, env: Env) -> Value:
        """A param group `{"params": model.parameters(), "lr": ...}` holds its params."""
        values = [self.eval(v, env) for v in node.values]
        for key in node.keys:
            self.eval(key, env)
        for key, value in zip(node.keys, values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "params":
                paths = shapes.param_paths(value.shape)
                if paths is not None:
                    return EMPTY.with_shape(("params", paths))
        keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
        if keys and all(isinstance(k, str) for k in keys) and len(set(keys)) == len(keys):
            # {"g": opt_g, "d": opt_d}, {"d": loss_d, "g": loss_g}: each entry keeps its
            # identity and its own graphs
            entries = tuple((k, v.shape) for k, v in zip(keys, values, strict=True))
            return Value(union(values), ("dict", entries), tuple(v.graphs for v in values))
        spread = max((i for i, k in enumerate(node.keys) if k is None), default=-1)
        after = list(zip(keys[spread + 1 :], values[spread + 1 :], strict=True))
        if spread >= 0 and after and all(isinstance(k, str) for k, _ in after):
            # {**d_losses, "g": loss_g}: the keys written after the last `**` are known, each
            # with its own graphs; any other key may hold any of the spread dicts' graphs
            entries = tuple((k, v.shape) for k, v in after)
            rest = union(values[: spread + 1])
            parts = tuple(v.graphs for _, v in after) + (rest,)
            return Value(union(values), ("dict", entries + (("**", UNKNOWN),)), parts)
        return Value(union(values), UNKNOWN)

    def expr_Compare(self, node: ast.Compare, env: Env) -> Value:
        for child in [node.left, *node.comparators]:
            self.eval(child, env)
        return EMPTY.with_shape(OTHER)

    def expr_BinOp(self, node: ast.BinOp, env: Env) -> Value:
        left, right = self.eval(node.left, env), self.eval(node.right, env)
        if isinstance(node.op, ast.Mod) and is_text(node.left):
            return EMPTY.with_shape(OTHER)  # `"loss %.4f" % loss`: a str holds no graph
        shape = TENSOR if TENSOR in (left.shape, right.shape) else UNKNOWN
        paths = (shapes.param_paths(left.shape), shapes.param_paths(right.shape))
        if isinstance(node.op, ast.Add) and None not in paths:
            shape = ("params", paths[0] | paths[1])  # list(a.parameters()) + list(b...)
        elif isinstance(node.op, ast.Add) and any(
            isinstance(side, ast.List) or path is not None
            for side, path in zip((node.left, node.right), paths, strict=True)
        ):
            # `list(self.manager.parameters()) + [self.goal_init]` bound before an optimizer
            # is built over it (LeakGAN's `split_params()`), as when it is given directly
            sides = [
                path if path is not None else self._tensor_params(side, env)
                for side, path in zip((node.left, node.right), paths, strict=True)
            ]
            shape = ("params", sides[0] | sides[1]) if None not in sides else shape
        graphs = left.graphs | right.graphs
        if isinstance(node.op, SAVING_OPERATORS):  # `x @ W`, `h * gate`
            graphs |= self.leaf_graphs([node.left, node.right])
        return Value(graphs, shape)

    def expr_UnaryOp(self, node: ast.UnaryOp, env: Env) -> Value:
        operand = self.eval(node.operand, env)
        return EMPTY.with_shape(OTHER) if isinstance(node.op, ast.Not) else operand

    def expr_IfExp(self, node: ast.IfExp, env: Env) -> Value:
        self.eval(node.test, env)
        known = self._constant_test(node.test)  # `h.detach() if self.detach else h`
        if known is None:
            known = self._known_test(node.test)  # `init if t == 0 else h` in a loop over t
        if known is None:
            known = self._mode_test(node.test, env)  # `h.detach() if self.training else h`
        if known is not None:
            return self.eval(node.body if known else node.orelse, env)
        if _detach_guard(node) or self._tensor_guard(node):
            # `state.detach() if hasattr(state, "detach") else state` (or `if
            # torch.is_tensor(state)`): what has no detach method is no tensor, and holds no
            # graph
            self.eval(node.orelse, env)
            return join_values(self.eval(node.body, env), EMPTY.with_shape(UNKNOWN))
        return join_values(self.eval(node.body, env), self.eval(node.orelse, env))

    def _tensor_guard(self, node: ast.IfExp) -> bool:
        """`x.detach() if torch.is_tensor(x) else x`, or with `isinstance(x, torch.Tensor)`."""
        test = node.test
        if not isinstance(test, ast.Call) or not test.args:
            return False
        tested = dotted_name(test.args[0])
        if tested is None or tested != dotted_name(node.orelse):
            return False
        qualified = self.symbols.qualify(test.func)
        if qualified == "torch.is_tensor" and len(test.args) == 1:
            return True
        return (
            qualified == "isinstance"
            and len(test.args) == 2
            and self.symbols.qualify(test.args[1]) == "torch.Tensor"
        )

    def expr_NamedExpr(self, node: ast.NamedExpr, env: Env) -> Value:
        value = self.eval(node.value, env)
        self.bind(node.target, value, env)
        return value

    def expr_Lambda(self, node: ast.Lambda, env: Env) -> Value:
        return EMPTY.with_shape(OTHER)

    def expr_JoinedStr(self, node: ast.JoinedStr, env: Env) -> Value:
        for child in walk(node):
            if isinstance(child, ast.FormattedValue):
                self.eval(child.value, env)
        return EMPTY.with_shape(OTHER)

    def expr_Starred(self, node: ast.Starred, env: Env) -> Value:
        return self.eval(node.value, env)

    def expr_ListComp(self, node: ast.ListComp, env: Env) -> Value:
        return self._comprehension(node, env, [node.elt])

    def expr_DictComp(self, node: ast.DictComp, env: Env) -> Value:
        built = self._comprehension(node, env, [node.key, node.value])
        return Value(built.graphs, UNKNOWN_ENTRIES, (built.graphs,))

    def _is_known_name(self, name: str) -> bool:
        symbols = self.symbols
        return (
            name in symbols.imports
            or name in symbols.functions
            or name in symbols.classes
            or name in _BUILTIN_NAMES
        )

    def _comprehension(self, node, env: Env, elements: list[ast.expr]) -> Value:
        """The comprehension's value: the graphs of its last element expression (a dict
        comprehension's value, never its key)."""
        inner = dict(env)
        targets: set[str] = set()
        aliases, iterated_from = dict(self.frame.aliases), dict(self.iterated_from)
        for generator in node.generators:
            items = self.eval(generator.iter, inner)
            item = items.with_shape(shapes.item_shape(items.shape))
            self.bind(generator.target, item, inner, write=False)
            self.iterate_elements(generator.target, generator.iter, inner)
            source, target = self.key_for(generator.iter), self.key_for(generator.target)
            if source is not None and target is not None:
                # `[t.detach_() for t in hidden]` changes the items of `hidden` in place
                self.iterated_from[target] = source
            targets |= {n.id for n in walk(generator.target) if isinstance(n, ast.Name)}
            for condition in generator.ifs:
                self.eval(condition, inner)
        before = {g.key for value in inner.values() for g in value.graphs}
        values = [self.eval(e, inner) for e in elements]
        self.frame.aliases, self.iterated_from = aliases, iterated_from
        for key, value in inner.items():
            if key not in targets and key.removeprefix(self.frame.prefix) not in targets:
                env[key] = value
        result = values[-1]
        if isinstance(node, ast.ListComp):
            # each item is its own evaluation: what the element expression built is one item's
            # (marked as built per pass, as a loop's are), what it read from outside is shared
            per_item = self._id("loop", node)
            result = result.map_graphs(
                lambda g: (
                    g
                    if g.key in before or g.opaque or g.crossed is not None
                    else g.carry(per_item, "<comprehension>", ())
                )
            )
        return Value(result.graphs, ("seq", result.shape if len(values) == 1 else UNKNOWN))

    expr_SetComp = expr_GeneratorExp = expr_ListComp


def _detach_guard(node: ast.IfExp) -> bool:
    """`x.detach() if hasattr(x, "detach") else x`."""
    test = node.test
    return (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Name)
        and test.func.id == "hasattr"
        and len(test.args) == 2
        and isinstance(test.args[1], ast.Constant)
        and test.args[1].value == "detach"
        and dotted_name(test.args[0]) is not None
        and dotted_name(test.args[0]) == dotted_name(node.orelse)
    )


def _is_expr(node: ast.AST) -> bool:
    return isinstance(node, ast.expr)


def _is_alias(node: ast.expr) -> bool:
    """Under no_grad, `a = b` still hands over b's tensor (and its graph)."""
    if isinstance(node, ast.Tuple | ast.List):
        return all(_is_alias(e) for e in node.elts)
    return dotted_name(node) is not None


def _is_trainer_object(shape) -> bool:
    """Optimizers and modules: values whose identity matters when kept in a container."""
    return isinstance(shape, tuple) and shape[0] in ("optimizer", "module")


def _sliced(value: Value, index: ast.Slice) -> Value | None:
    """`outputs[1:]` of `return logits, h.detach(), c.detach()` with constant bounds: the
    items picked, each at its new position with its own graphs; None where the bounds or the
    items' positions are not known."""
    bounds = [
        None if b is None else int_constant(b) for b in (index.lower, index.upper, index.step)
    ]
    written = (index.lower, index.upper, index.step)
    if (
        any(b is None and w is not None for b, w in zip(bounds, written, strict=True))
        or bounds[2] == 0
    ):
        return None
    shape, parts = value.shape, value.parts
    arity = len(shape[1]) if isinstance(shape, tuple) and shape[0] == "tuple" else None
    if parts is None or arity is not None and len(parts) != arity:
        return None
    picked = range(len(parts))[slice(*bounds)]
    kept = tuple(parts[i] for i in picked)
    if arity is not None:  # a tuple's items, as `Value.part` gives them
        shape, unplaced = ("tuple", tuple(shape[1][i] for i in picked)), frozenset()
    else:  # and what a list gained at no known position
        unplaced = value.graphs - frozenset().union(*parts)
    return Value(frozenset().union(*kept) | unplaced, shape, kept)


def _without_positions(value: Value) -> Value:
    """`t[1:]`, `t[::-1]`: the items, none at a known position."""
    shape = value.shape
    if isinstance(shape, tuple) and shape[0] == "tuple":
        shape = ("vtuple", shapes.join_all(shape[1]))
    return Value(value.graphs, shape, None, value.item_parts)
