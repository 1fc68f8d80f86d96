"""LF001 hidden-state-not-detached: recurrent state carried across `backward()` undetached."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from loopfix.edits import Edit
from loopfix.model import shapes
from loopfix.model.bindings import bound_before
from loopfix.model.loop_model import assigned_paths
from loopfix.model.symbols import dotted_name
from loopfix.rules.base import Applicability, FileContext, Finding, Fix, Rule

DOCS = """\
## What it does
Finds a recurrent state (the hidden state of `nn.LSTM` / `nn.GRU` / `nn.RNN`, the `(h, c)` of
`LSTMCell`s, or anything a module call consumes and returns, also when it is kept on a module
attribute or passed through a helper function) that is produced in one iteration of a loop, goes
through a `backward()` in that iteration, and is fed into the next iteration without being
detached or re-created. A detach written by type is followed: `if isinstance(hidden,
torch.Tensor): ... elif isinstance(hidden, tuple): ...` (or `torch.is_tensor`) takes only the
branch the state's kind allows, and a helper that maps itself over the state's elements
(`tuple(map(repackage, h))`) is read on an element.

## Why is this bad?
`backward()` frees the graph it went through. In the next iteration the new loss reaches back
through the state into that freed graph, and autograd raises
"Trying to backward through the graph a second time". The popular band-aid,
`backward(retain_graph=True)`, keeps the old graph alive instead: after `optimizer.step()` has
changed the weights in place, the next backward fails with "one of the variables needed for
gradient computation has been modified by an inplace operation" (and without a step, every
iteration backpropagates through all earlier batches, ever slower and ever bigger).

## Example
```python
hidden = model.init_hidden(batch_size)
for x, y in batches:
    output, hidden = model(x, hidden)
    loss = criterion(output, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
```

Use instead:
```python
hidden = model.init_hidden(batch_size)
for x, y in batches:
    output, hidden = model(x, hidden)
    hidden = tuple(s.detach() for s in hidden)
    loss = criterion(output, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
```

## What the fix preserves
The fix cuts the graph at the batch boundary (truncated backpropagation through time). Its
correctness criterion: the first iteration (everything up to the first optimizer step, or the
first backward without one) computes bit-for-bit the same losses and the same gradient for
every parameter after the fix. Later iterations differ only in what the bug made of them: the
original either fails, or (with `retain_graph=True` and a recurrent op that does not save its
weights) silently backpropagates into earlier batches through weights that have since been
stepped, which is what the fix cuts. The state's values are unchanged; only the history
autograd keeps is cut: every module forward the original ran computes the same output, and no
backward of a later iteration reaches fewer parameters than the same backward reached in the
first iteration (a detach that cut a path from a loss to the parameters that produced it in
its own iteration would show there). The detach is placed where this holds:
- right after the call that produces the state, when nothing later in the iteration reads it;
- otherwise where the state is fed back, before its first use in the iteration (guarded when
  the state may still be `None`);
- otherwise right after the `backward()` that consumed its graph (truncated BPTT every K steps,
  where the state must keep its graph inside the window);
- only before it is fed back when the iteration writes the state again after that backward
  (an evaluation forward without `no_grad` inside the training loop): the one place every
  path to the next training backward passes.
Each candidate is checked by re-analysing the patched code: the carried graph must be gone and
every backward must reach exactly the same graph as before. Tensors, tuples, lists and nested
containers are detached in place of the original structure; a state whose structure cannot be
known statically goes through a small `detach_state` helper (or the file's own
`repackage_hidden`). A `retain_graph=True` that only served the carried state is removed.

## Detach or reset
Detaching keeps the state's values across batches: right when the batches continue one stream
(truncated BPTT over `data[i : i + bptt]`, `get_batch(source, i)`, the pieces of
`x.split(k)`). When the batches are independent (a `DataLoader(..., shuffle=True)`), carrying
the state at all is the bug, and the fix resets it at the start of each batch by running its
initialisation (the last assignment before the loop) again before its first reader. The
finding says which one the code's evidence points to and why; the other one is the editor's
second code action.

## Fix safety
The detach is safe by the criterion above. The reset is **unsafe** (`[-]`, applied only with
`--unsafe-fixes`): later batches start from the initial state instead of the previous batch's
values, on purpose; verification checks that the original fails and the patched code runs
every capped iteration, and reports the first forward that differs. With the detach,
gradients of later iterations no longer flow into earlier batches: that is the intent of
truncated BPTT, and the original code could not compute them anyway.
`loopfix verify` runs the original and the patched loop and compares the first iteration's loss
and gradients. A finding without a statically safe placement is reported without a fix.

## Known problems
State kept in objects loopfix cannot see (a class from an installed package, or from a module
it cannot resolve, that stores its state internally) is not followed; such loops are not
reported. A state carried with `retain_graph=True` that no optimizer step changes before the
next backward (K-chunk windows that detach right after each step) is backpropagated again by
design and is not reported; without any step, such a loop only grows, and is not reported
either.

## References
- PyTorch word language model example, `repackage_hidden`
- PyTorch autograd mechanics: "Saved tensors" and `retain_graph`
"""

PREDICTED_ERRORS = (
    "Trying to backward through the graph a second time",
    "modified by an inplace operation",
)

HELPER = [
    "def {name}(state):",
    '    """Cut a recurrent state loose from the graph of the batch that produced it."""',
    "    if isinstance(state, dict):",
    "        return {{key: {name}(value) for key, value in state.items()}}",
    "    if isinstance(state, tuple) and hasattr(state, '_fields'):  # a namedtuple",
    "        return type(state)(*({name}(value) for value in state))",
    "    if isinstance(state, (list, tuple)):",
    "        return type(state)({name}(value) for value in state)",
    "    return state.detach() if hasattr(state, 'detach') else state  # None, arrays, numbers",
]


@dataclass
class CarriedState:
    """One finding: the variables one statement produces that carry graph into the next turn."""

    loop_id: int
    producer: ast.stmt
    variables: list[str] = field(default_factory=list)
    consumers: set[int] = field(default_factory=set)
    retained: bool = False
    # a statement after the consuming backward writes the state again (an evaluation in the
    # training loop, without no_grad): the cut must be where every path passes
    reattached: bool = False

    @property
    def names(self) -> str:
        quoted = [f"`{v}`" for v in self.variables]
        return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]

    @property
    def pronoun(self) -> str:
        return "it" if len(self.variables) == 1 else "them"

    @property
    def carries(self) -> str:
        return f"{self.names} {'carries' if len(self.variables) == 1 else 'carry'}"


class HiddenStateNotDetached(Rule):
    code = "LF001"
    name = "hidden-state-not-detached"
    summary = "Recurrent state carries the previous iteration's graph across backward()"
    docs = DOCS

    # ------------------------------------------------------------------ detector
    def detect(self, context: FileContext) -> list[Finding]:
        return [self._finding(context, state) for state in self._carried_states(context)]

    def _carried_states(self, context: FileContext) -> list[CarriedState]:
        model = context.model
        states: dict[int, CarriedState] = {}
        for record in model.carried_graphs():
            writers = model.writers(record.loop_id, record.var)
            if not writers:
                continue
            producer = max(writers, key=lambda s: (s.lineno, s.col_offset))
            state = states.setdefault(id(producer), CarriedState(record.loop_id, producer))
            if _nests(model.loop(record.loop_id), model.loop(state.loop_id)):
                state.loop_id = record.loop_id  # the innermost loop is the batch boundary
            if record.var not in state.variables:
                state.variables.append(record.var)
            state.consumers |= record.consumers
            state.retained |= record.retained
        for state in states.values():
            order = assigned_paths(state.producer)
            state.variables.sort(key=lambda v: order.index(v) if v in order else len(order))
            state.reattached = _written_after_backward(model, state)
        return list(states.values())

    def _finding(self, context: FileContext, state: CarriedState) -> Finding:
        finding = self._described(context, state)
        source = context.model.batch_source(state.loop_id)
        if source is not None and source.kind == "independent":
            finding.message += (
                f"; the batches are independent ({source.evidence}): reset {state.pronoun} "
                "at each batch"
            )
        elif source is not None:
            finding.message += (
                f"; the batches continue one stream ({source.evidence}): detach {state.pronoun}"
            )
        return finding

    def _described(self, context: FileContext, state: CarriedState) -> Finding:
        start, end = context.layout.node_range(_reported_node(state))
        message = (
            f"{state.carries} the previous iteration's autograd graph into the next "
            "backward(), which then goes through a freed graph"
        )
        if state.retained:
            message = (
                f"{state.carries} the previous iteration's autograd graph into the next "
                "backward(); retain_graph=True only delays the failure until an optimizer "
                "step changes weights that graph still needs"
            )
        return Finding(self.code, self.name, message, start, end, detail=state)

    # ------------------------------------------------------------------ fix
    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        """Detach or reset, as the batches' evidence says (`LoopModel.batch_source`): for
        independent batches the reset (unsafe: the state's values change) comes first and
        the detach is the editor's second code action; otherwise the other way round."""
        state: CarriedState = finding.detail
        wanted = context.options.alternatives  # the other fix is only an editor's action
        source = context.model.batch_source(state.loop_id)
        independent = source is not None and source.kind == "independent"
        reset = self._reset_fix(context, state) if independent or wanted else None
        if independent and reset is not None:
            detach = self._detach_fix(context, state) if wanted else None
            finding.alternatives = (detach,) if detach is not None else ()
            return reset
        detach = self._detach_fix(context, state)
        if independent and detach is not None:  # the title says why it is not the reset
            title = f"{detach.title} (no initialisation to reset {state.pronoun} to was found)"
            detach = replace(detach, title=title)
        finding.alternatives = (reset,) if reset is not None else ()
        if detach is None and reset is None and self._unbound_everywhere(context, state):
            finding.fix_unavailable = (
                f"a detach at the batch boundary would read {state.names} on a path that has "
                f"not bound {state.pronoun} (the loop's first pass, or a setting's guard): "
                f"detach {state.pronoun} on the paths that bind {state.pronoun}"
            )
        return detach

    def _unbound_everywhere(self, context: FileContext, state: CarriedState) -> bool:
        """Whether every placement the detach has an edit for was refused because a path
        reaching it has not bound the state."""
        placements = [self._after_producer, self._before_feed_back, self._after_backward]
        planned = [p for p in placements if p(context, state) is not None]
        return bool(planned) and not any(self._bound_at(context, state, p) for p in planned)

    def _reset_fix(self, context: FileContext, state: CarriedState) -> Fix | None:
        """Run the state's initialisation (the last assignment before the loop) again at the
        top of each batch, before the state's first reader."""
        model, layout = context.model, context.layout
        loop = model.loop(state.loop_id)
        before = _statements_before(model, loop)
        inits: list[ast.stmt] = []
        for var in state.variables:
            init = next((s for s in before if _initialises(s, var)), None)
            if init is None or not layout.stands_alone(init):
                return None
            read = {n.id for n in ast.walk(init.value) if isinstance(n, ast.Name)}
            if any(model.writers(state.loop_id, name) for name in read):
                return None  # what it is built from changes inside the loop
            if init not in inits:
                inits.append(init)
        reader = model.first_reader(loop, state.variables)
        if reader is None or not layout.stands_alone(reader):
            return None
        lines = [layout.text[slice(*layout.node_range(i))] for i in inits]
        edits = [layout.insert_before(reader, lines)]
        patched = context.with_edits(edits)
        if patched is None or not self._is_safe(context, patched, [state]):
            return None
        edits += self._needless_retains(context, state, edits)
        return Fix(
            f"Reset {state.names} at the start of each batch",
            tuple(edits),
            Applicability.unsafe,
            f"{state.names} starts every batch from its initial value instead of the previous "
            "batch's final one (right for independent batches; detaching keeps the values)",
        )

    def _detach_fix(self, context: FileContext, state: CarriedState) -> Fix | None:
        placements = (
            ("after the call that produces it", self._after_producer),
            ("before it is fed back", self._before_feed_back),
            ("after the backward() that consumed its graph", self._after_backward),
        )
        if state.reattached:  # only the top of the iteration is on every path
            placements = (("before it is fed back", self._before_feed_back),)
        for where, placement in placements:
            edits = placement(context, state)
            if edits is None or not self._bound_at(context, state, placement):
                continue
            if not context.proven(edits, lambda p: self._is_safe(context, p, [state])):
                continue
            removals = self._needless_retains(context, state, edits)
            title = f"Detach {state.names} {where}"
            if removals:
                title += " and drop the retain_graph=True it needed"
            return Fix(title, tuple(edits + removals))
        return None

    def _bound_at(self, context: FileContext, state: CarriedState, placement) -> bool:
        """Every path reaching the detach has bound the state, the loop's first pass included
        (a state set only under a guard, or only from the second pass on, is not)."""
        anchor, after = self._anchor_of(context, state, placement)
        if anchor is None:
            return False
        model = context.model
        return all(
            (after and var in _assigned(anchor)) or bound_before(model, anchor, var)
            for var in state.variables
        )

    def _anchor_of(self, context: FileContext, state: CarriedState, placement):
        """The statement a placement inserts at, and whether after it."""
        model = context.model
        if placement == self._after_producer:
            return state.producer, True
        if placement == self._before_feed_back:
            return model.first_reader(model.loop(state.loop_id), state.variables), False
        for consumer in sorted(state.consumers):
            statement = model.backward(consumer).statement
            if statement is not None and model.loop(state.loop_id) in model.enclosing_statements(
                statement
            ):
                return self._end_of_update(context, statement, state.variables), True
        return None, True

    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        return self._is_safe(before, after, [f.detail for f in fixed])

    def _is_safe(self, before: FileContext, after: FileContext, states: list[CarriedState]) -> bool:
        """The carried graphs are gone, nothing new appeared, and every backward reaches
        exactly the graph it reached before."""
        remaining = {(r.loop_id, r.var) for r in after.model.carried_graphs()}
        original = {(r.loop_id, r.var) for r in before.model.carried_graphs()}
        fixed = {(s.loop_id, v) for s in states for v in s.variables}
        if remaining & fixed or not remaining <= original:
            return False
        old, new = before.model.backward_signatures(), after.model.backward_signatures()
        if any(state.reattached for state in states):
            # the cut also removes what an evaluation after the update re-attached in the
            # previous iteration: routes across the back-edge may go, the iteration's stay
            return old.keys() == new.keys() and all(
                _this_iteration(old[b]) == _this_iteration(new[b]) and new[b] <= old[b] for b in old
            )
        return old == new

    # ------------------------------------------------------------------ verification
    records_graphs = True
    compares = (
        "the first iteration's losses and parameter gradients, every forward output the "
        "original ran, and what each later backward reaches"
    )

    def probe(self, finding: Finding) -> ast.expr | bool:
        """The state where the statement that produces it reads it (`rnn(x, hidden)`)."""
        state = finding.detail
        for node in ast.walk(getattr(state.producer, "value", None) or state.producer):
            loaded = isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
            if loaded and node.id in state.variables:
                return node
        return False

    def confirm(self, finding: Finding, runs) -> str | None:
        """The original raised the second-backward (or in-place version) error within the
        capped iterations, or the state, where it is fed back, held a graph that a backward
        had already gone through and a later backward went through a node an earlier one had
        (a graph carried across iterations; the state read where a helper loopfix does not
        follow cuts it, `h = Trunc.cut(h)`, holds the graph just backwarded, and is no
        evidence alone)."""
        from loopfix.rules.compare import Outcome, original_raised, stopped_before

        raised = original_raised(runs, PREDICTED_ERRORS)
        seen = runs.probed(finding)
        if raised is None or (seen is not None and seen["backwarded"] and _went_again(runs)):
            return None
        if not raised.startswith(Outcome.unconfirmed):
            return raised  # it failed otherwise: that decides nothing
        why = (
            f"{Outcome.unconfirmed}: the original did not raise '{PREDICTED_ERRORS[0]}' within "
            f"{runs.iterations} iterations"
        )
        if seen is None:
            return why
        line = runs.original_line(finding.start)
        if not seen["seen"] and (stopped := stopped_before(runs, line)) is not None:
            return stopped
        if seen["backwarded"]:
            return (
                f"{why}, and no later backward went through the graph the state fed back on "
                f"line {line} held"
            )
        return f"{why}, and the state fed back on line {line} held no graph a backward had used"

    def oracle(self, finding: Finding, runs) -> str:
        """The patched code runs every capped iteration, the first iteration computes the same
        losses and the same gradient for every parameter, every forward the original ran
        computes the same output, and no backward of a later iteration reaches fewer
        parameters than the same backward did in the first (the cut only removes paths into
        earlier iterations)."""
        from loopfix.rules.compare import (
            first_difference,
            first_iteration,
            forward_difference,
            lost_reach,
            patched_raised,
        )

        original, patched = runs.original, runs.patched
        if not original.events:
            return "unverified: the original failed before its first backward"
        if patched.error:
            return patched_raised(patched)
        difference = (
            first_difference(first_iteration(original.events), patched.events)
            or forward_difference(
                original.trace.get("forwards", []), patched.trace.get("forwards", [])
            )
            or lost_reach(patched.events)
        )
        return "equivalent" if difference is None else f"not equivalent: {difference}"

    # ------------------------------------------------------------------ placements
    def _after_producer(self, context: FileContext, state: CarriedState) -> list[Edit] | None:
        model, producer = context.model, state.producer
        loop = model.loop(state.loop_id)
        chain = model.enclosing_statements(producer)
        if loop not in chain or not context.layout.stands_alone(producer):
            return None
        between = chain[1 : chain.index(loop)]
        if any(not isinstance(s, ast.If | ast.With | ast.Try) for s in between):
            return None
        if model.read_later_in_iteration(producer, loop, state.variables):
            return None
        return self._detach_edits(context, state, producer, after=True)

    def _before_feed_back(self, context: FileContext, state: CarriedState) -> list[Edit] | None:
        reader = context.model.first_reader(context.model.loop(state.loop_id), state.variables)
        if reader is None or not context.layout.stands_alone(reader):
            return None
        return self._detach_edits(context, state, reader, after=False)

    def _after_backward(self, context: FileContext, state: CarriedState) -> list[Edit] | None:
        model = context.model
        loop = model.loop(state.loop_id)
        for consumer in sorted(state.consumers):
            statement = model.backward(consumer).statement
            if statement is None or loop not in model.enclosing_statements(statement):
                continue
            anchor = self._end_of_update(context, statement, state.variables)
            if context.layout.stands_alone(anchor):
                return self._detach_edits(context, state, anchor, after=True)
        return None

    @staticmethod
    def _end_of_update(context: FileContext, backward: ast.stmt, variables: list[str]) -> ast.stmt:
        """The last of the simple statements that follow the backward (`step`, `zero_grad`,
        logging), so the detach reads as the end of the update."""
        _, block = context.model.block_of(backward)
        anchor = backward
        for statement in block[block.index(backward) + 1 :]:
            simple = isinstance(statement, ast.Expr | ast.Assign | ast.AugAssign)
            if not simple or any(context.model.reads(statement, v) for v in variables):
                break
            if any(v in _assigned(statement) for v in variables):
                break
            anchor = statement
        return anchor

    # ------------------------------------------------------------------ the inserted code
    def _detach_edits(
        self, context: FileContext, state: CarriedState, anchor: ast.stmt, *, after: bool
    ) -> list[Edit] | None:
        model, layout = context.model, context.layout
        shape_at = model.shape_after if after else model.shape_before
        names = _FreshNames(model.names_in_use())
        owner, _ = model.block_of(anchor)
        unit = layout.indent_unit(anchor, owner)
        helper = _Helper(context)
        plain, guarded = [], []
        for var in state.variables:
            shape = shape_at(anchor, var)
            optional = isinstance(shape, tuple) and shape[0] == "opt"
            expression = _detached(var, shape[1] if optional else shape, names)
            if expression is None:
                expression, optional = f"{helper.name}({var})", False
            (guarded if optional else plain).append((var, expression))
        lines = []
        if plain:
            targets = ", ".join(v for v, _ in plain)
            lines.append(f"{targets} = {', '.join(e for _, e in plain)}")
        for var, expression in guarded:
            lines += [f"if {var} is not None:", f"{unit}{var} = {expression}"]
        insert = layout.insert_after if after else layout.insert_before
        return [insert(anchor, lines), *helper.edits()]

    def _needless_retains(
        self, context: FileContext, state: CarriedState, edits: list[Edit]
    ) -> list[Edit]:
        """`retain_graph=True` on a consuming backward that, once the state is detached, no
        later backward needs."""
        removals: list[Edit] = []
        for consumer in sorted(state.consumers):
            site = context.model.backward(consumer)
            keyword = site.retain_keyword
            if site.retain is not True or keyword is None or not _is_true(keyword.value):
                continue
            if site.statement is None:
                continue  # a backward in a function of another module: not this file's text
            removal = context.layout.remove_keyword(site.call, keyword)
            if removal is None:
                continue
            patched = context.with_edits(edits + removals + [removal])
            if (
                patched is not None
                and self._is_safe(context, patched, [state])
                and not patched.model.backwards_reaching_graph_of(consumer)
            ):
                removals.append(removal)
        return removals


class _FreshNames:
    def __init__(self, used: set[str]) -> None:
        self.used = set(used)

    def pick(self, *candidates: str) -> str:
        for candidate in candidates:
            if candidate not in self.used:
                self.used.add(candidate)
                return candidate
        base, number = candidates[0], 1
        while f"{base}{number}" in self.used:
            number += 1
        self.used.add(f"{base}{number}")
        return f"{base}{number}"


class _Helper:
    """The detach helper: the file's own (`repackage_hidden`) or `detach_state`, added once."""

    def __init__(self, context: FileContext) -> None:
        self.context = context
        existing = context.model.detaching_functions()
        self._name = existing[0] if existing else None
        self._needed = False

    @property
    def name(self) -> str:
        if self._name is None:
            self._name = _FreshNames(self.context.model.names_in_use()).pick(
                "detach_state", "detach_recurrent_state"
            )
        if self._name not in self.context.model.symbols.functions:
            self._needed = True
        return self._name

    def edits(self) -> list[Edit]:
        if not self._needed:
            return []
        lines = [line.format(name=self._name) for line in HELPER]
        anchor = _last_leading_import(self.context.tree)
        return [self.context.layout.insert_top_level(anchor, lines)]


def _detached(name: str, shape, names: _FreshNames, depth: int = 0) -> str | None:
    """An expression for `name` detached, keeping its container structure."""
    if shape == shapes.TENSOR:
        return f"{name}.detach()"
    if depth >= 2 or not isinstance(shape, tuple):
        return None
    kind, items = shape[0], shape[1]
    if (
        kind == "tuple"
        and all(i == shapes.TENSOR for i in items)
        or kind == "vtuple"
        and (items == shapes.TENSOR)
    ):
        part = names.pick("s", "t", "part")
        return f"tuple({part}.detach() for {part} in {name})"
    if kind == "tuple":
        parts = [_detached(f"{name}[{k}]", item, names, depth + 1) for k, item in enumerate(items)]
        if None in parts:
            return None
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
    if kind == "seq":
        item = names.pick("layer", "item", "entry") if items != shapes.TENSOR else None
        if item is None:
            part = names.pick("s", "t", "part")
            return f"[{part}.detach() for {part} in {name}]"
        inner = _detached(item, items, names, depth + 1)
        return None if inner is None else f"[{inner} for {item} in {name}]"
    return None


def _nests(inner: ast.AST, outer: ast.AST) -> bool:
    return inner is not outer and any(node is inner for node in ast.walk(outer))


def _reported_node(state: CarriedState) -> ast.AST:
    """The target that stores the carried state, or the producing call."""
    producer = state.producer
    targets = []
    if isinstance(producer, ast.Assign):
        targets = producer.targets
    elif isinstance(producer, ast.AugAssign | ast.AnnAssign):
        targets = [producer.target]
    for target in targets:
        for node in ast.walk(target):
            if isinstance(node, ast.Name | ast.Attribute) and dotted_name(node) in state.variables:
                return node
    if isinstance(producer, ast.Expr | ast.Assign):
        return producer.value
    return producer


def _assigned(statement: ast.stmt) -> set[str]:
    return set(assigned_paths(statement))


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _last_leading_import(tree: ast.Module) -> ast.stmt | None:
    """The last import of the module's opening block (docstring, imports), else the docstring."""
    anchor = None
    for index, statement in enumerate(tree.body):
        if (
            isinstance(statement, ast.Import | ast.ImportFrom)
            or index == 0
            and isinstance(statement, ast.Expr)
            and isinstance(statement.value, ast.Constant)
        ):
            anchor = statement
        else:
            break
    return anchor


def _initialises(statement: ast.stmt, var: str) -> bool:
    """`var = ...` with `var` the single target."""
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == var
    )


def _statements_before(model, node: ast.stmt) -> list[ast.stmt]:
    """The statements that run before `node` in its block and in the blocks around it, nearest
    first (where a state is initialised before the epoch loop around the batch loop)."""
    found: list[ast.stmt] = []
    current = node
    while id(current) in model.parents:
        owner, block = model.block_of(current)
        found += reversed(block[: block.index(current)])
        if not isinstance(owner, ast.stmt) or isinstance(owner, ast.FunctionDef | ast.ClassDef):
            break
        current = owner
    return found


def _this_iteration(routes: frozenset) -> frozenset:
    """The routes of graph pieces built in the backward's own iteration (none crossed)."""
    return frozenset(route for route in routes if route[1] is None)


def _written_after_backward(model, state: CarriedState) -> bool:
    """Whether the loop writes the state after a backward that consumed its graph, with
    the writer in the loop's own body order (an evaluation forward after the update)."""
    loop = model.loop(state.loop_id)

    def in_loop(statement) -> bool:  # not in a function the loop calls
        return statement is not None and loop in model.enclosing_statements(statement)

    lines = [
        model.backward(c).statement.lineno
        for c in state.consumers
        if in_loop(model.backward(c).statement)
    ]
    if not lines:
        return False
    writers = [w for v in state.variables for w in model.writers(state.loop_id, v)]
    return any(in_loop(w) and w.lineno > max(lines) for w in writers)


def _went_again(runs) -> bool:
    """Whether a backward of the original run went through a graph node an earlier backward
    had gone through (the trace's marks, `--graphs`)."""
    return any(e[0] == "backward" and len(e) > 9 and e[8] for e in runs.original.events)
