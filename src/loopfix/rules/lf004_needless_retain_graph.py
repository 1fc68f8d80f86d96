"""LF004 needless-retain-graph: `retain_graph=True` where no later backward uses the graph."""

from __future__ import annotations

import ast

from loopfix.rules.base import FileContext, Finding, Fix, Rule

DOCS = """\
## What it does
Finds a `backward(retain_graph=True)` (or `torch.autograd.backward` / `torch.autograd.grad` with
it) whose graph no later backward goes through: not later in the iteration, not through state
carried into the next iteration, and not by code outside the analysed scope (the graph is not
returned or kept on `self`). The loss must be built only from module calls loopfix can see:
a loss that involves a function parameter, a closure variable or the result of a function
defined elsewhere may share its graph with code that backpropagates through it again. For the
same reason it is not reported while a backward of the same function (or of the module's
body) that may run after it, below it or in a loop around both, has a loss loopfix cannot see
whole (`features.sum().backward()` after the loop, on a graph built from a hand-made tensor).

## Why is this bad?
`retain_graph=True` keeps every intermediate tensor the graph saved alive until the graph
itself is dropped. When nothing uses it again this only costs memory; when the graph is also
reachable from carried state (see LF001) it grows every iteration. It is also the usual
band-aid for "Trying to backward through the graph a second time", and hides that bug.

## Example
```python
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward(retain_graph=True)
    optimizer.step()
```

Use instead:
```python
for x, y in loader:
    loss = criterion(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
```

## What the fix preserves
The fix removes the keyword argument and nothing else. Gradients are identical with and without
it (retaining a graph never changes what a backward computes); peak memory can only go down.
Before proposing it, loopfix re-analyses the patched code: no backward may then go through a
freed graph.

## Fix safety
Safe (`[*]`; this rule has no unsafe fix) when the analysis sees every use of the graph. A
graph passed to a function defined in another module and backwarded there is invisible;
loopfix stays silent when the graph is returned or stored on `self`, or when it came in through
a parameter of a function that other project modules call (they hold it, and may backpropagate
it afterwards, as VQGAN's trainer does after `calculate_lambda(perceptual_loss, gan_loss)` took
each loss's gradient with `retain_graph=True`), or when a generator yields it to its
consumer, but not when it is handed to an unknown callee. Nor does it report a retain where the
analysis took a setting to be one of the values its tests list (an `if`/`elif` chain, or
separate `if` blocks that all bind one name): another value may take a path no run followed.

## References
- PyTorch docs, `torch.Tensor.backward` (`retain_graph`)
"""


class NeedlessRetainGraph(Rule):
    code = "LF004"
    name = "needless-retain-graph"
    summary = "retain_graph=True keeps a graph alive that no later backward uses"
    docs = DOCS

    def detect(self, context: FileContext) -> list[Finding]:
        model, findings = context.model, []
        for site in model.backwards():
            keyword = site.retain_keyword
            if site.retain is not True or keyword is None or not _is_true(keyword.value):
                continue
            if site.statement is None or _creates_graph(site.call):
                continue
            if model.backwards_reaching_graph_of(site.id) or model.retained_graph_escapes(site.id):
                continue
            if not model.loss_fully_visible(site.id):
                continue  # part of the graph comes from code loopfix cannot see
            if model.assumes_listed_setting(site.id):
                continue  # a setting's other values, which no run followed, may need it
            if any(
                _may_follow(model, b, site) and not model.loss_fully_visible(b.id)
                for b in model.backwards()
            ):
                continue  # a later backward whose graph loopfix cannot see may go through it
            if site.id in model.observations.reached_consumers.get(site.id, set()):
                continue  # the same backward goes through it again next iteration (LF001)
            start, end = context.layout.node_range(keyword)
            message = f"{keyword.arg}=True keeps this graph alive, but no later backward uses it"
            findings.append(Finding(self.code, self.name, message, start, end, detail=site))
        return findings

    def fix(self, context: FileContext, finding: Finding) -> Fix | None:
        site = finding.detail
        removal = context.layout.remove_keyword(site.call, site.retain_keyword)
        if removal is None:
            return None
        if not context.proven([removal], lambda patched: self._is_safe(context, patched)):
            return None
        return Fix("Remove retain_graph=True", (removal,))

    def accepts(self, before: FileContext, after: FileContext, fixed: list[Finding]) -> bool:
        return self._is_safe(before, after)

    records_graphs = True
    compares = "every loss, gradient and optimizer step, and peak memory"

    def confirm(self, finding: Finding, runs) -> str | None:
        """The backward ran with `retain_graph=True` in the original (called from its line,
        directly or through helpers), no later backward went through any node of a graph it
        kept, and no live tensor (a variable, an attribute, a cache) still reached a node of it
        when the same line's backward ran again (`trace.kept_alive`)."""
        from loopfix.rules.compare import Outcome, said, stopped_before

        original = runs.original
        if original.error or original.trace is None:
            return f"{Outcome.undecided}: the original raised {said(original.error)}"
        call = finding.detail.call
        lines = runs.judged_lines(call.lineno, call.end_lineno or call.lineno)
        backwards = [e for e in original.events if e[0] == "backward" and len(e) > 9]
        numbers = {n for n, e in enumerate(backwards, 1) if lines & set(e[9]) and e[7]}
        line = runs.original_line(finding.start)
        if not numbers:
            if not any(lines & set(e[9]) for e in backwards):
                stopped = stopped_before(runs, line)
                if stopped is not None:
                    return stopped
            return (
                f"{Outcome.unconfirmed}: no backward on line {line} ran with retain_graph=True "
                f"in {runs.iterations} iterations"
            )
        if any(set(e[8] or ()) & numbers for e in backwards):
            return (
                f"{Outcome.unconfirmed}: a later backward went through the graph the backward "
                f"on line {line} kept"
            )
        if numbers & set(original.trace.get("kept_alive", ())):
            # a tensor built before the loop (`table = torch.tanh(emb.weight)`) and used
            # only now and then: a backward after the capped iterations may go through it
            return (
                f"{Outcome.unconfirmed}: a tensor of the run still held the graph the backward "
                f"on line {line} kept when that backward ran again, so a backward after the "
                "capped iterations may go through it"
            )
        return None

    def oracle(self, finding: Finding, runs) -> str:
        """Every loss, gradient and step of the whole capped run is the same, and peak memory
        is not higher (5% and 16 MiB of slack for noise)."""
        from loopfix.rules.compare import same_whole_run

        return same_whole_run(runs)

    @staticmethod
    def _is_safe(before: FileContext, after: FileContext) -> bool:
        """No backward goes through a freed graph, and each reaches the same graph as before."""
        if any(after.model.freed_graph_reused_by(b.id) for b in after.model.backwards()):
            return False
        if len(after.model.carried_graphs()) > len(before.model.carried_graphs()):
            return False
        return before.model.backward_signatures() == after.model.backward_signatures()


def _is_true(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _creates_graph(call: ast.Call) -> bool:
    return any(
        k.arg == "create_graph" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in call.keywords
    )


def _may_follow(model, other, site) -> bool:
    """Whether the backward `other`, in the same function (or both in the module's body),
    may run after `site`: below it, or in a loop around both (the next pass).
    `feat.sum().backward()` after the loop goes through the graph the loop's last
    `retain_graph=True` kept; a backward in another method sees the graph only through
    what the calls pass, which the model follows."""
    if other.id == site.id or _function_of(model, other) is not _function_of(model, site):
        return False
    below = other.call.lineno > site.call.lineno
    return below or bool(set(other.loops or ()) & set(site.loops or ()))


def _function_of(model, site) -> ast.AST | None:
    """The function whose body holds the backward's statement (None: the module's body, or
    not known)."""
    node = site.statement
    while node is not None and id(node) in model.parents:
        node = model.parents[id(node)][0]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            return node
    return None
