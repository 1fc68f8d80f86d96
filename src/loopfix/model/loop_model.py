"""The loop model of one module: what the rules ask about, built once per source text.

`build_model` parses nothing itself; it takes a tree and runs the abstract interpreter over the
module body and over every function and method body (each as its own scope). Rules read the
observations through the small query methods here and never walk the tree for facts.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass, field, replace

from loopfix.model import shapes
from loopfix.model.batches import BatchSource, batch_source
from loopfix.model.bindings import parameter_names
from loopfix.model.calls import (
    BACKWARD_FUNCTIONS,
    MODULE_PLUMBING,
    MODULE_QUERIES,
    WORKER_CLASSES,
    declared_outside,
    local_names,
)
from loopfix.model.counters import entered
from loopfix.model.frames import Effect, Frame, Observations
from loopfix.model.graphs import EMPTY, OPAQUE, BackwardSite, CarriedGraph, UpdateSite
from loopfix.model.handovers import GRADIENT_ATTRIBUTES, Handover, handovers_in
from loopfix.model.index import (
    BLOCK_FIELDS,
    TreeIndex,
    child_nodes,
    index_tree,
    kept_fact,
    syntax_key,
    walk,
)
from loopfix.model.instances import CallSites, Instances, self_shape
from loopfix.model.interpreter import BudgetSpent, Interpreter
from loopfix.model.summaries import Summaries
from loopfix.model.symbols import (
    ClassInfo,
    FunctionNode,
    Symbols,
    collect_symbols,
    dotted_name,
    named_closure,
    project_callees,
    root_name,
)

Block = list[ast.stmt]
_OWNER_CALLS_WITHOUT_STATE = MODULE_PLUMBING | MODULE_QUERIES
# module methods whose result refers to the module's own tensors (`holders_of`)
REFERENCE_METHODS = frozenset(
    {
        *("state_dict", "parameters", "named_parameters", "buffers", "named_buffers"),
        *("modules", "named_modules", "children", "named_children"),
    }
)
# statements the modules calling into a file may run for what they pass it, all of them
# together, nearest first: the corpus's callers run at most 150; a framework's entry
# script, which builds everything, runs far more and would cost more than the file itself
CALLERS_BUDGET = 1000


# what a test of a setting is built from: names, attributes, subscripts by a constant, and
# comparisons of them with constants (`params['lr_decay']`, `args.decay and not args.fixed`)
_SETTING_NODES = (
    ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Compare, ast.BoolOp,
    ast.UnaryOp, ast.Load, ast.cmpop, ast.boolop, ast.unaryop,
)  # fmt: skip


@dataclass
class LoopModel:
    tree: ast.Module
    symbols: Symbols
    observations: Observations
    parents: dict[int, tuple[ast.AST, Block]] = field(default_factory=dict)
    index: TreeIndex | None = field(default=None, repr=False)
    _saved_changes: list | None = field(default=None, repr=False)
    # what the parser keeps across the analyses of one document (`ChunkParser`): the index of
    # each statement, facts of the statements it gave back
    pieces: dict | None = field(default=None, repr=False)
    kept: dict | None = field(default=None, repr=False)
    _functions: list | None = field(default=None, repr=False)  # every function, for scope_of
    _names: frozenset[str] | None = field(default=None, repr=False)  # see `names_in_use`
    # (question, loop or function id) -> answer: questions rules ask of a loop again
    _answers: dict[tuple[str, object], bool] = field(default_factory=dict, repr=False)
    _holders: dict[frozenset[str], frozenset[str]] = field(default_factory=dict, repr=False)
    _readers: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)
    _handovers: dict[int, list[Handover]] = field(default_factory=dict, repr=False)
    summaries: Summaries | None = field(default=None, repr=False)
    # statements the build interpreted (the callers' pass included): what the model's cost
    # grows with, counted so that a test can bound it without timing
    statements_run: int = 0

    # ------------------------------------------------------------ questions for rules
    def summary_counts(self) -> dict[str, tuple[int, int]]:
        """Function name -> (summaries computed, calls they served) in this model's build
        (`summaries`): a helper called from N sites with one context is (1, N)."""
        if self.summaries is None:
            return {}
        names = set(self.summaries.computed) | set(self.summaries.applied)
        return {n: (self.summaries.computed[n], self.summaries.applied[n]) for n in names}

    def plain_counts(self) -> dict[str, tuple[int, int]]:
        """Function name -> (plain runs computed, calls they served) in this model's build
        (`plain.PlainCalls`): a helper run once in another analysis is (0, N) here."""
        if self.summaries is None:
            return {}
        plain = self.summaries.plain
        names = set(plain.computed) | set(plain.applied)
        return {n: (plain.computed[n], plain.applied[n]) for n in names}

    def carried_graphs(self) -> list[CarriedGraph]:
        """Variables that carry a consumed graph into the next iteration of a loop."""
        found = [
            record
            for record in self.observations.carried.values()
            if record.loop_id in self.observations.loops and "#" not in record.var
        ]
        return sorted(found, key=lambda r: (self.loop(r.loop_id).lineno, r.var))

    def loop(self, loop_id: int) -> ast.For | ast.While | ast.AsyncFor:
        return self.observations.loops[loop_id]

    def backward(self, backward_id: int) -> BackwardSite:
        return self.observations.backwards[backward_id]

    def backward_signatures(self) -> dict[int, frozenset]:
        return dict(self.observations.signatures)

    def backwards_reaching_graph_of(self, backward_id: int) -> list[int]:
        """Backwards that go through graph already traversed by `backward_id`."""
        return [
            other
            for other, consumers in self.observations.reached_consumers.items()
            if backward_id in consumers and other != backward_id
        ]

    def updates(self) -> list:
        """Every optimizer step and zero_grad the interpreter saw, in order of appearance."""
        return [self.observations.updates[k] for k in sorted(self.observations.updates)]

    def backwards(self) -> list[BackwardSite]:
        return [self.observations.backwards[k] for k in sorted(self.observations.backwards)]

    def freed_graph_reused_by(self, backward_id: int) -> set[int]:
        """Backwards of the same iteration whose freed graph `backward_id` goes through."""
        return set(self.observations.freed_reaches.get(backward_id, set()))

    def stale_steps_before(self, backward_id: int) -> set[int]:
        """Optimizer steps that changed weights saved in `backward_id`'s graph."""
        return set(self.observations.stale_reaches.get(backward_id, set()))

    def modules_reached_by(self, backward_id: int) -> set[str | None]:
        return set(self.observations.backward_modules.get(backward_id, set()))

    def assumes_listed_setting(self, backward_id: int) -> bool:
        """Whether the backward ran only in runs that took a setting to be one of the values
        its tests list (`conditions.ListedValues`): another value may take a path no run
        followed."""
        return backward_id in self.observations.listed_backwards

    def retained_graph_escapes(self, backward_id: int) -> bool:
        return backward_id in self.observations.escaping

    def loss_fully_visible(self, backward_id: int) -> bool:
        """Whether the backward's loss was built only from module calls loopfix can see."""
        return backward_id not in self.observations.partly_unknown

    def modules_called_by(self, statement: ast.stmt) -> set[str | None]:
        """Module paths whose forward `statement` runs (None: a module it cannot name)."""
        return set(self.observations.statement_modules.get(id(statement), set()))

    def holders_of(self, modules: frozenset[str]) -> frozenset[str]:
        """The names (and attribute paths) of the file that may keep a reference to one of
        `modules` or to something of one: bound to a value built from it (`ema = EMA(D,
        0.9)`, `ema = make_ema(D)`, `trackers = {"d": EMA(D)}`, `sd = D.state_dict()`, `w =
        D[0].weight`, `snap = lambda: D[2].weight.sum()`), to such a name (`e = ema`), or
        given one later (`ema.model = D`); and the functions and methods of the file that
        read one (`def record(): print(D[0].weight)`, `self.log_d()`). Using any of them may
        read those weights (`ema.update()` averages them). Not a deep copy, nor an optimizer
        (its steps are the updates the rules order), nor what a forward returns (`D(x)`)."""
        found = self._holders.get(modules)
        if found is None:
            found = self._holders[modules] = self._holders_of(modules)
        return found

    def _holders_of(self, modules: frozenset[str]) -> frozenset[str]:
        bindings = kept_fact(
            self.kept, "object bindings", self.tree, lambda: _object_bindings(self.tree)
        )
        # what a call returns as a tensor is a new value (`advantage = td_target(critic,
        # batch)`), and an optimizer's steps are the updates the rules order
        bindings = [
            (target, given)
            for target, given, statement in bindings
            if not (
                isinstance(given, ast.Call)
                and _tensor_or_optimizer(self.shape_after(statement, target))
            )
        ]
        held: set[str] = set()
        changed = True
        while changed:  # `e = ema` after `ema = EMA(D)`
            changed = False
            for target, given in bindings:
                if target not in held and self._references(given, modules | held):
                    held.add(target)
                    changed = True
        for name, function in self.symbols.functions.items():
            if self._references(function, modules | held):
                held.add(name)
        for info in self.symbols.classes.values():
            for name, method in info.methods.items():
                if self._references(method, modules | held):
                    held.add(f"self.{name}")
        return frozenset(held)

    def _references(self, node: ast.AST, paths: frozenset[str] | set[str]) -> bool:
        """Whether `node` names one of `paths` (or something below one) other than as the
        module a call runs (`D(x)`, `D.features(x)`: a forward's new tensor), inside a deep
        copy or in an optimizer's construction. A method that gives references
        (`D.state_dict()`, `D.parameters()`) counts."""
        skipped: set[int] = set()
        for child in walk(node):
            if not isinstance(child, ast.Call) or id(child) in skipped:
                continue
            qualified = self.symbols.qualify(child.func) or ""
            if qualified == "copy.deepcopy" or qualified.startswith("torch.optim."):
                skipped |= {id(n) for n in walk(child)}
            elif dotted_name(child.func) is not None and not (
                isinstance(child.func, ast.Attribute) and child.func.attr in REFERENCE_METHODS
            ):
                skipped |= {id(n) for n in walk(child.func)}  # the module a forward runs
        for child in walk(node):
            if id(child) in skipped or not isinstance(child, ast.Name | ast.Attribute):
                continue
            path = dotted_name(child)
            if path is not None and any(shapes.within(path, p) for p in paths):
                return True
        return False

    def events_within(self, statement: ast.stmt) -> list[tuple]:
        """Backwards and updates run by functions of the file that `statement` calls:
        ("backward" | "update", id, the modules an update touches as this scope names them),
        in order of first occurrence."""
        return list(self.observations.events_within.get(id(statement), []))

    def update_call(self, statement: ast.stmt) -> frozenset[str] | None:
        """For a statement that only calls a function which runs one whole optimizer update
        on its arguments, `zero_grad()`, then backwards, then `step()` of the modules it
        zeroed (`update_params(self.q1_optim, q1_loss)`), and calls no module: the modules it
        steps, as this scope names them. Else None."""
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
            return None
        if self.modules_called_by(statement):
            return None
        events = [
            (kind if kind == "backward" else self.update(event).kind, modules)
            for kind, event, modules in self.events_within(statement)
        ]
        if len(events) < 3 or events[0][0] != "zero_grad" or events[-1][0] != "step":
            return None
        if any(kind != "backward" for kind, _ in events[1:-1]):
            return None
        zeroed, stepped = events[0][1], events[-1][1]
        if not zeroed or not stepped or not stepped <= zeroed:
            return None
        return stepped

    def zero_grads_called(self, statement: ast.stmt) -> list[UpdateSite] | None:
        """The `zero_grad()` calls that the functions `statement` calls run whenever it runs
        (`self.zero_all()` whose body is `self.opt_g.zero_grad(); self.opt_d.zero_grad()`),
        each an `UpdateSite` placed at `statement`, its modules as this scope names them and
        no target; [] when they run no update. None when they run one the model cannot place
        that way: a step, a `zero_grad()` that may not run on every call (under a condition,
        after an early `return`), or one of modules the model cannot name."""
        found = []
        for kind, event, modules in self.events_within(statement):
            if kind != "update":
                continue
            update = self.update(event)
            if update.kind != "zero_grad" or update.modules is None or not modules:
                return None
            if (id(statement), event) not in self.observations.every_call:
                return None
            found.append(replace(update, statement=statement, target=None, modules=modules))
        return found

    def gradient_work(
        self, statement: ast.stmt, backwards: set[int], modules: frozenset[str]
    ) -> set[str]:
        """What `statement` (with the statements inside it) does to the gradients of
        `modules`, itself or in the functions it calls: "backward" (one of `backwards`, by
        id), "step" (any optimizer's), "zero_grad" (one written in it), "called zero_grad"
        (functions it calls clear `modules` whenever it runs: `zero_grads_called`), or
        "unknown" (they run an update the model cannot place)."""
        inside = {id(n) for n in walk(statement)}
        work = {"backward" for b in self.backwards() if b.id in backwards and id(b.call) in inside}
        work |= {u.kind for u in self.updates() if id(u.call) in inside}
        for node in (n for n in walk(statement) if isinstance(n, ast.stmt)):
            for kind, event, _ in self.events_within(node):
                if kind == "backward" and event in backwards:
                    work.add("backward")
                elif kind == "update" and self.update(event).kind == "step":
                    work.add("step")
            called = self.zero_grads_called(node)
            if called is None:
                work.add("unknown")
            elif any(shapes.covers(z.modules, modules) for z in called):
                work.add("called zero_grad" if node is statement else "zero_grad")
        return work

    def may_clear_elsewhere(self, loop_id: int) -> bool:
        """Whether the loop may clear gradients in a way no update event shows: a call of
        any `zero_grad` in the loop or in a project function or method it calls (by name
        too: `cb.on_batch_begin()` of a callback list, or one its function defines), a hook
        that may (`hooks_may_clear`), or a call of a name bound to what a project function
        returns whose module names a way of clearing (`clear = hooks.make_clear(model)`, a
        `functools.partial`)."""
        loop = self.region(loop_id)
        if _anywhere_called(loop, self.symbols, _calls_zero_grad) or self.hooks_may_clear():
            return True
        # a function the loop's function defines and the loop calls (`zero_grad_all()`)
        nested = _nested_functions(self.function_around(loop))
        for node in walk(loop) if nested else ():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                function = nested.get(node.func.id)
                if function is not None and _anywhere_called(
                    function, self.symbols, _calls_zero_grad
                ):
                    return True
        made = _made_by_project_calls(self.function_around(loop) or self.tree, self.symbols)
        called = {
            n.func.id
            for n in walk(loop)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
        return any(
            _names_clearing(self.symbols.home(f))
            for name in called & made.keys()
            for f in made[name]
        )

    def hooks_may_clear(self) -> bool:
        """Whether the module, or a project function it calls (four calls deep), registers a
        hook that may clear gradients where no loop shows it: an optimizer step hook
        (`opt.register_step_post_hook(clear)` in a helper given the optimizer, the global
        `register_optimizer_step_post_hook`), or a module or tensor hook whose function may
        (`model.register_forward_pre_hook(lambda m, i: m.zero_grad())`)."""
        return _anywhere_called(self.tree, self.symbols, _registers_clearing_hook)

    def may_backpropagate(self, statement: ast.stmt) -> bool:
        """Whether `statement` may run a backward pass, itself or in a function it calls: a
        backward the model saw there (whatever it reaches), a call of a `backward` method or
        of `torch.autograd.backward` (`tr.backward(loss)`, `accelerator.backward(loss)`), or
        a project function or method that makes one (followed four calls deep)."""
        inside = {id(n) for n in walk(statement)}
        if any(id(b.call) in inside for b in self.backwards()):
            return True
        nodes = (n for n in walk(statement) if isinstance(n, ast.stmt))
        if any(kind == "backward" for n in nodes for kind, _, _ in self.events_within(n)):
            return True
        return _anywhere_called(statement, self.symbols, _runs_backward)

    def effects_within(self, statement: ast.stmt) -> list[Effect]:
        """What the functions `statement` calls did there, in this scope's terms: schedulers
        and optimizers they step, totals they add an argument to, whether a method kept the
        graphs its object holds (`frames.Effect`)."""
        return list(self.observations.effects.get(id(statement), []))

    def called_effects(self, kind: str) -> list[Effect]:
        """Every effect of `kind` on a statement of this module's scopes, by line."""
        found = [e for effects in self.observations.effects.values() for e in effects]
        found = [e for e in found if e.kind == kind]
        return sorted(found, key=lambda e: (e.statement.lineno, e.statement.col_offset))

    def reached_through_call(self, backward_id: int) -> ast.stmt | None:
        """For a backward inside a helper: the first statement of a calling scope through
        which it went through a freed or stale graph (where the helper is called)."""
        anchors = self.observations.reach_anchors.get(backward_id)
        return min(anchors, key=lambda s: (s.lineno, s.col_offset)) if anchors else None

    def call_anchors(self, backward_id: int) -> list[ast.stmt]:
        """Every statement of a calling scope through which the backward went through a
        freed or stale graph, in source order (`reached_through_call` is the first)."""
        anchors = self.observations.reach_anchors.get(backward_id, [])
        return sorted(anchors, key=lambda s: (s.lineno, s.col_offset))

    def batch_source(self, loop_id: int) -> BatchSource | None:
        """Whether the loop's batches continue one stream or are independent, and the
        evidence (see `batches.py`); None when the code does not say. The loader is looked
        for in the innermost function around the loop (else the module)."""
        return batch_source(self.loop(loop_id), self.scope_of(loop_id))

    def walks_models(self, loop_id: int) -> bool:
        """Whether the loop walks networks or optimizers the code built, not data: its
        iterable is a list, `ModuleList` or `ModuleDict` (or a dict) of modules or of
        optimizers, directly, through `range(len(...))`, `enumerate`, `zip`, `.values()` or
        `.items()` (`for i in range(len(netsD)):`, AttnGAN's discriminators; `for net, opt
        in zip(nets, optimizers):`); or it is a `range(...)` loop whose counter picks the
        items of such a list (`for i in range(self.num_D):` over `self.netD[i]`,
        pix2pixHD's). Its number of iterations is fixed when the models are built."""
        loop = self.loop(loop_id)
        if not isinstance(loop, ast.For | ast.AsyncFor):
            return False
        walked = _walked_collections(loop.iter)
        if walked:
            return all(self._holds_models(loop, w) for w in walked)
        return self._picks_models(loop)

    def _holds_models(self, loop: ast.stmt, collection: ast.expr) -> bool:
        name = dotted_name(collection)
        shape = self.shape_before(loop, name) if name else None
        if shape in (shapes.module("ModuleList"), shapes.module("ModuleDict")):
            return True
        if not isinstance(shape, tuple) or shape[0] not in MODEL_COLLECTIONS:
            return False
        if shape[0] == "dict":
            items = tuple(item for _, item in shape[1])
        else:
            items = shape[1] if shape[0] == "tuple" else (shape[1],)
        return bool(items) and all(shapes.is_module(i) or shapes.is_optimizer(i) for i in items)

    def _picks_models(self, loop: ast.For | ast.AsyncFor) -> bool:
        """`for i in range(n):` whose body indexes a list of models with `i`."""
        iterable, counter = loop.iter, loop.target
        if not (isinstance(iterable, ast.Call) and dotted_name(iterable.func) == "range"):
            return False
        if not isinstance(counter, ast.Name):
            return False
        picked = [
            node.value
            for statement in loop.body
            for node in walk(statement)
            if isinstance(node, ast.Subscript)
            and isinstance(node.slice, ast.Name)
            and node.slice.id == counter.id
        ]
        return any(self._holds_models(loop, collection) for collection in picked)

    def step_loop(self, loop_id: int) -> int:
        """The loop whose iterations are the training steps around a statement of loop
        `loop_id`: the loop itself, or the nearest loop around it while it walks models
        (`walks_models`) or the loop around it runs a backward or an optimizer step of its
        own, outside it (micro-batches accumulated before the step, a WGAN's critic
        iterations before the generator's). A total reset in each of that loop's
        iterations holds the graphs of one step, not of every step."""
        ids = {id(loop): i for i, loop in self.observations.loops.items()}
        current = loop_id
        while True:
            around = self.enclosing_statements(self.loop(current))[1:]
            outer = next((ids[id(s)] for s in around if id(s) in ids), None)
            if outer is None or not (self.walks_models(current) or self._steps_itself(outer)):
                return current
            current = outer

    def _steps_itself(self, loop_id: int) -> bool:
        """Whether the loop's own body, not a loop inside it, runs a backward or steps an
        optimizer."""
        sites = [*self.backwards(), *(u for u in self.updates() if u.kind == "step")]
        return any(site.loops and site.loops[-1] == loop_id for site in sites)

    def region(self, loop_id: int | ast.AST) -> ast.AST:
        """A loop by its id, or a function given as its node (the body of a training-step
        method is one iteration of its caller's loop)."""
        return self.loop(loop_id) if isinstance(loop_id, int) else loop_id

    def function_around(self, statement: ast.stmt) -> ast.AST | None:
        """The innermost function whose body holds `statement`, else None (module level)."""
        if self._functions is None:  # the index's, else one walk
            self._functions = (
                [function for _, function in self.index.functions]
                if self.index is not None
                else [
                    n
                    for n in walk(self.tree)
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
                ]
            )
        around = [f for f in self._functions if f.lineno < statement.lineno <= f.end_lineno]
        return max(around, key=lambda f: f.lineno) if around else None

    def scope_of(self, loop_id: int) -> ast.AST:
        """The innermost function around the loop, else the module."""
        return self.function_around(self.loop(loop_id)) or self.tree

    def scope_parameters(self, loop_id: int) -> set[str]:
        """The parameters of the function around the loop (none at module level)."""
        scope = self.scope_of(loop_id)
        if not isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef):
            return set()
        arguments = scope.args
        every = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        every += [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
        return {a.arg for a in every}

    def accumulations(self) -> list[tuple[ast.stmt, ast.expr, str, int]]:
        """Statements of this scope's loops that add a value carrying autograd graph to a
        total or a list (`total += loss`, `total = total + loss`, `losses.append(loss)`):
        (statement, the added expression, the total's variable, the loop's id). A value of
        unknown origin counts when the loop calls `backward()` on the same name (a loss
        computed by a model passed in as a parameter)."""
        found = []
        for statement, added, key, loop_id, known in self.observations.accumulations:
            name = added.id if isinstance(added, ast.Name) else None
            if known or (name is not None and name in self._backwarded(loop_id)):
                found.append((statement, added, key, loop_id))
        return found

    def called_totals(self) -> list[tuple[ast.stmt, ast.stmt, ast.expr, str, int]]:
        """`self.total += loss` in a method of the same object a loop of this scope calls
        (`self.step(x, y)`), after a backward freed every graph the value holds: (the
        loop's calling statement, the statement in the method, the added expression, the
        total's key, the loop's id), where the loop is in a method of a class of the file."""
        methods = self.index.functions if self.index is not None else []
        found = []
        for call, statement, added, key, loop_id in self.observations.called_totals:
            function = self.scope_of(loop_id) if loop_id in self.observations.loops else None
            in_method = any(owner is not None and f is function for owner, f in methods)
            if in_method and _instance_attribute(key):
                found.append((call, statement, added, key, loop_id))
        return found

    def _backwarded(self, loop_id: int, freeing: bool = False) -> set[str]:
        """Names the loop calls `.backward()` on (`loss.backward()`); with `freeing`, only
        by a backward that does not keep its graph (no `retain_graph=True`)."""
        names = set()
        for site in self.backwards():
            func = site.call.func if isinstance(site.call, ast.Call) else None
            receiver = func.value if isinstance(func, ast.Attribute) else None
            if freeing and site.retain is not False:
                continue
            if isinstance(receiver, ast.Name) and loop_id in site.loops:
                names.add(receiver.id)
        return names

    def freed_each_iteration(self, added: ast.expr, loop_id: int) -> bool:
        """Whether `added` is a name the loop backpropagates without keeping the graph
        (`loss.backward()`, then `self.running_loss += loss`): a total of it can never be
        backpropagated again, so detaching what is added changes no gradient anywhere, even
        where code loopfix does not see reads the total."""
        return isinstance(added, ast.Name) and added.id in self._backwarded(loop_id, True)

    def may_total(self, key: str, loop_id: int, added: ast.expr) -> bool:
        """Whether `key`, added `added` to in the loop `loop_id`, can be a running total
        LF006 asks about: a variable of the scope, or an attribute of `self` in a method
        (`self.running_loss += loss` in a trainer's `train_epoch`) when the loop
        backpropagates `added` itself without keeping its graph (`freed_each_iteration`:
        other methods, subclasses and code reaching the attribute by name, `getattr(self,
        name)` or `vars(self)`, may read it); not an attribute of another object (a meter's
        method's own store: `_through_methods`) nor a callee's local."""
        if "#" in key or loop_id not in self.observations.loops:
            return False
        if "." not in key:
            return True
        if not self.freed_each_iteration(added, loop_id):
            return False
        function = self.scope_of(loop_id)
        methods = self.index.functions if self.index is not None else []
        return _instance_attribute(key) and any(
            owner is not None and f is function for owner, f in methods
        )

    def only_logged(self, var: str, loop_id: int, skip: list[ast.stmt]) -> bool:
        """Whether every read of `var` in the scope around the loop (the innermost function,
        else the module), other than the statements in `skip`, only logs or averages it:
        inside `print`, a logging or tracker call (`logger.info`, `writer.add_scalar`,
        `wandb.log`, `set_postfix`, ...), an f-string, `float`/`int`/`round`/`str`/`format`,
        `.item()` / `.tolist()`, `len`, or arithmetic on it inside one of these. A reduction
        (`sum(losses)`, `torch.stack(losses).mean()`, `total.mean()`) or an attribute read
        (`meter.avg`) is followed to what uses its result, and so is a name it is assigned to,
        which must be read and only logged in turn; a method call statement on an object that
        the model saw keep its graphs to itself (`meter.reset()`) is neither. A read that
        reaches a backward, a return, an optimizer or anything else is not.

        A total kept on the instance (`self.running_loss`, `var` of the form `self.<name>`)
        outlives the method: every read of an attribute of that name in the whole file (in
        any method, on any object: `trainer.running_loss`) must only log it."""
        scope = self.tree if _instance_attribute(var) else self.scope_of(loop_id)
        skipped = {id(n) for statement in skip for n in walk(statement)}
        parents = {id(c): p for p in walk(scope) for c in child_nodes(p)}
        return self._reads_only_logged(var, scope, skipped, parents, 0)

    def _reads_only_logged(self, var: str, scope, skipped: set, parents: dict, depth: int):
        reads = 0
        attribute = var.removeprefix("self.") if _instance_attribute(var) else None
        for node in walk(scope):
            if id(node) in skipped or not _reads(node, var, attribute):
                continue
            reads += 1
            use = _logged(node, parents, self.symbols.qualify)
            if use is True or use == var or self._kept_by_method(node, parents):
                continue
            if not isinstance(use, str) or depth >= 2:
                return False
            follows = self._reads_only_logged(use, scope, skipped, parents, depth + 1)
            if not follows:  # never read (stored for code loopfix does not see) or not logged
                return False
        return reads > 0  # a total never read is not logged (a name assigned to must be read)

    def _kept_by_method(self, node: ast.expr, parents: dict) -> bool:
        """`meter.reset()` as a statement of its own, a method the model followed that ran
        no backward or update and handed no graph of the object or its arguments on."""
        if not isinstance(node, ast.Name):
            return False
        method = parents.get(id(node))
        call = parents.get(id(method))
        statement = parents.get(id(call))
        if not (
            isinstance(method, ast.Attribute)
            and isinstance(call, ast.Call)
            and call.func is method
            and isinstance(statement, ast.Expr)
        ):
            return False
        kept = [e for e in self.effects_within(statement) if e.kind == "keeps"]
        if not kept or self.events_within(statement):
            return False
        return all(e.target == node.id and not e.handed_on for e in kept)

    def _answer(self, question, loop_id) -> bool:
        """`question(loop_id)`, asked once per model (rules ask it of a loop again)."""
        key = (question.__name__, loop_id)
        if key not in self._answers:
            self._answers[key] = question(loop_id)
        return self._answers[key]

    def clears_gradients_by_hand(self, loop_id: int) -> bool:
        """Whether the loop clears or sets gradients other than by `zero_grad()` of an
        optimizer or a module it knows: `p.grad = None`, `p.grad.zero_()`, `.grad.data.zero_()`,
        a `zero_grad` of something else, or a function of the file doing it (its events).
        `loop_id` may also be a function: its body is one iteration of its caller's loop."""
        return self._answer(self._clears_gradients_by_hand, loop_id)

    def clears_gradients_by_hand_directly(self, loop_id: int) -> bool:
        """`clears_gradients_by_hand`, where a function the loop calls running a `zero_grad()`
        or a step the model knows (an update event, `events_within`) does not count: for a
        rule that reads those events itself."""
        return self._answer(self._clears_gradients_by_hand_directly, loop_id)

    def _clears_gradients_by_hand_directly(self, loop_id: int) -> bool:
        return self._clears_gradients_by_hand(loop_id, calls=False)

    def _clears_gradients_by_hand(self, loop_id: int, calls: bool = True) -> bool:
        loop = self.region(loop_id)
        known = {id(u.call) for u in self.updates() if u.kind == "zero_grad"}
        for node in walk(loop):
            func = node.func if isinstance(node, ast.Call) else None
            zeroes = isinstance(func, ast.Attribute) and func.attr == "zero_grad"
            if zeroes and id(node) not in known:
                return True
            if (
                calls
                and isinstance(node, ast.stmt)
                and any(kind == "update" for kind, _, _ in self.events_within(node))
            ):
                return True
        # by hand, or in a project function or method it calls (`clear_grads(model)`), or
        # maybe in a method called by name (`getattr(cb, event)()`: a callback list)
        return _anywhere_called(loop, self.symbols, _may_set_gradients)

    def calls_unplaced_updates(self, loop_id: int) -> bool:
        """Whether a statement of the loop (or function) calls functions that run a step or
        a `zero_grad()` which `zero_grads_called` cannot place at that statement."""
        return self._answer(self._calls_unplaced_updates, loop_id)

    def _calls_unplaced_updates(self, loop_id: int) -> bool:
        statements = (n for n in walk(self.region(loop_id)) if isinstance(n, ast.stmt))
        return any(self.zero_grads_called(s) is None for s in statements)

    def gradient_handovers(self, loop_id: int) -> list[Handover]:
        """The statements of the loop (itself, not a loop inside it) that hand one module's
        gradients to another's parameters (`model.handovers`), when nothing else the loop
        runs touches gradients (`_touches_gradients_besides`), no class of the module has a
        `zero_grad` of its own, and the loop does not build the module handed from again."""
        if loop_id not in self._handovers:
            self._handovers[loop_id] = self._gradient_handovers(loop_id)
        return self._handovers[loop_id]

    def _gradient_handovers(self, loop_id: int) -> list[Handover]:
        loop = self.loop(loop_id)
        known = frozenset(id(u.call) for u in self.updates() if u.kind == "zero_grad")
        found, seen = [], set()
        for statement in _statements_of_iteration(loop):
            for handover in handovers_in(statement, self.symbols, known):
                # one per statement and pair (`sp._grad = p.grad` or `p.grad.cpu()`)
                key = (id(statement), handover.source, handover.target)
                if key not in seen:
                    seen.add(key)
                    found.append(handover)
        if not found or self._touches_gradients_besides(loop, found):
            return []
        if any("zero_grad" in info.methods for info in self.symbols.classes.values()):
            return []  # an optimizer of the project's own may clear them its own way
        # a local model built again in the loop starts each iteration without gradients, as
        # do parameters put in place by `load_state_dict(state, assign=True)`
        rebound = [*assigned_paths(loop), *_assigned_state(loop)]
        return [h for h in found if not any(shapes.within(h.source, p) for p in rebound)]

    def updates_within(self, function: FunctionNode) -> list:
        """The steps and `zero_grad()` calls written in `function`'s body, as its own scope
        saw them (their paths in its names)."""
        inside = {id(node) for node in walk(function)}
        return [u for u in self.updates() if id(u.call) in inside]

    def backwards_within(self, function: FunctionNode) -> list[BackwardSite]:
        """The backward passes written in `function`'s body."""
        inside = {id(node) for node in walk(function)}
        return [b for b in self.backwards() if id(b.call) in inside]

    def _touches_gradients_besides(self, loop: ast.AST, handovers: list[Handover]) -> bool:
        """Whether the loop, besides its hand-overs and the `zero_grad()` calls the model
        knows, reads or sets a `.grad` (`torch._foreach_zero_([p.grad ...])`, `g.zero_()` of
        a gradient kept in a list), names a `zero_grad` (a bound method kept, `clear()`), or
        calls a function of the project (nested ones too) that does either."""
        skipped = {id(n) for h in handovers for n in walk(h.statement)}
        skipped |= {id(n) for u in self.updates() if u.kind == "zero_grad" for n in walk(u.call)}
        skipped |= _gradients_only_measured(loop)
        scope = self.function_around(loop) or self.tree
        if any(_names_zero_grad(n) and id(n) not in skipped for n in walk(scope)):
            return True  # a `zero_grad` kept or called elsewhere (`clear = model.zero_grad`)
        nested = _nested_functions(scope)
        for node in walk(loop):
            if id(node) in skipped:
                continue
            if _handles_gradients(node, self.symbols):
                return True  # (a `zero_grad` named here was found in the scope above)
            callees = _run_by(node, self.symbols)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                callees += [nested[node.func.id]] if node.func.id in nested else []
            for callee in callees:
                home = self.symbols.home(callee)
                if _anywhere_called(callee, home, _touches_gradients):
                    return True
        return False

    def handles_gradients(self, loop_id: int) -> bool:
        """Whether the loop, or a project function it calls, reads or writes `.grad`, asks
        `torch.autograd.grad` for gradients or calls a method by a name chosen at run time:
        its gradients may be taken or combined between a backward and the next `zero_grad()`
        (per-sample gradients gathered by hand)."""
        return self._answer(self._handles_gradients, loop_id)

    def _handles_gradients(self, loop_id: int) -> bool:
        return _anywhere_called(self.region(loop_id), self.symbols, _handles_gradients)

    def function_called_for(self, statement: ast.stmt, node: ast.AST) -> FunctionNode | None:
        """The project function or method a call of `statement` runs whose body holds
        `node` (a scheduler's step it made), or None."""
        for call in walk(statement):
            if not isinstance(call, ast.Call):
                continue
            for function in project_callees(call.func, self.symbols):
                if any(n is node for n in walk(function)):
                    return function
        return None

    def uncleared_called_steps(self, loop_id: int) -> tuple[ast.stmt, ast.stmt, list[str]] | None:
        """For a loop whose body calls a function that steps optimizers (`train_step(model,
        opt, x, y)`, `trainer.update()`) after a backward (its own, or one a called function
        runs), when nothing the loop runs clears gradients (no `zero_grad()` of any kind in
        the loop or in a project function it calls, four calls deep, and none set by hand):
        (the first statement of the body that runs a backward, the first that steps, the
        optimizers' paths in this scope's terms). None otherwise."""
        loop = self.region(loop_id)
        body = getattr(loop, "body", [])
        steps = [
            (index, effect)
            for index, statement in enumerate(body)
            for effect in self.effects_within(statement)
            if effect.kind == "step"
        ]
        if not steps or not all(_plain_path(effect.target) for _, effect in steps):
            return None
        around = (
            set(map(id, self.enclosing_statements(loop))) if id(loop) in self.parents else set()
        )
        sites = {id(u.call): u for u in self.observations.updates.values()}
        loops = self.observations.loops
        for _, effect in steps:
            site = sites.get(id(effect.call))
            if site is None or any(id(loops.get(i)) not in around for i in site.loops):
                return None  # it steps in a loop of its own (`train_epoch`): reported there
        if any(u.kind == "zero_grad" and loop_id in u.loops for u in self.updates()):
            return None
        symbols = self.symbols
        if self.may_clear_elsewhere(loop_id) or _anywhere_called(loop, symbols, _may_set_gradients):
            return None
        # a module that names a way of clearing gradients anywhere (`clear = opt.zero_grad`, a
        # property, a decorator, a hook, `getattr(opt, "zero_grad")`) may run it where the
        # calls are not followed: this one and those of the functions that step
        homes = {id(symbols): symbols}
        for index, effect in steps:
            function = self.function_called_for(body[index], effect.call)
            if function is not None:
                homes.setdefault(id(symbols.home(function)), symbols.home(function))
        if any(_names_clearing(home) for home in homes.values()):
            return None
        for index, effect in steps:
            if any(isinstance(n, ast.comprehension | ast.Lambda) for n in walk(body[index])):
                return None  # several steps in one statement: no place between them
            root = effect.target.split(".")[0]
            if self.observations.writers.get((loop_id, root)) or self.observations.writers.get(
                (loop_id, effect.target)
            ):
                return None  # the optimizer is made again in the loop: its gradients too
        within = [e for s in walk(loop) if isinstance(s, ast.stmt) for e in self.events_within(s)]
        if any(k == "update" and self.update(e).kind == "zero_grad" for k, e, _ in within):
            return None
        own = {id(b.statement) for b in self.backwards() if b.statement is not None}
        backward_at = next(
            (
                index
                for index, statement in enumerate(body)
                if any(k == "backward" for k, _, _ in self.events_within(statement))
                or any(id(s) in own for s in walk(statement) if isinstance(s, ast.stmt))
            ),
            None,
        )
        first_step = steps[0][0]
        if backward_at is None or backward_at > first_step:
            return None
        return body[backward_at], body[first_step], sorted({e.target for _, e in steps})

    def scheduler_steps(self) -> list[tuple[ast.Call, ast.stmt, str | None, bool]]:
        """Every `scheduler.step()` of this scope (once each): the call, its statement, the
        path of the optimizer the scheduler was built on, and whether it was given arguments
        (`ReduceLROnPlateau.step(val_loss)`)."""
        seen, found = set(), []
        for call, statement, optimizer, given in self.observations.scheduler_steps:
            if id(call) not in seen and statement is not None:
                seen.add(id(call))
                found.append((call, statement, optimizer, given))
        return found

    def existence_guard(self, statement: ast.stmt) -> ast.If | None:
        """The `if scheduler is not None:` (or `if scheduler:`), without `else`, whose only
        statement is `statement`, a call on the object it tests (`scheduler.step()`): the
        call runs whenever the object exists, and moves with its test."""
        owner, block = self.block_of(statement)
        call = statement.value if isinstance(statement, ast.Expr) else None
        if not (
            isinstance(owner, ast.If)
            and block is owner.body
            and len(block) == 1
            and not owner.orelse
            and isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
        ):
            return None
        test = owner.test
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], ast.IsNot)
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
        ):
            test = test.left
        return owner if syntax_key(test) == syntax_key(call.func.value) else None

    def setting_guard(self, statement: ast.stmt) -> ast.If | None:
        """The `if params['lr_decay']:` (or `if args.decay:`), without `else`, whose only
        statement is `statement`, inside a loop, when its test reads only names, attributes
        and constant subscripts that no loop around it changes (`changes_condition`) or
        binds as its target: every iteration takes the same side, so the statement runs in
        every iteration or in none, and moves with its test. None for a test of the
        iteration (`if epoch > 0:`) or of what the loop computes."""
        owner, block = self.block_of(statement)
        if not (
            isinstance(owner, ast.If)
            and block is owner.body
            and len(block) == 1
            and not owner.orelse
            and all(isinstance(n, _SETTING_NODES) for n in walk(owner.test))
        ):
            return None
        if not isinstance(self.block_of(owner)[0], LOOPS):
            return None
        read = {n.id for n in walk(owner.test) if isinstance(n, ast.Name)}
        # not a test of any loop around it (`if epoch > 0:` in the batch loop), nor of what
        # one of them changes
        if not read or read & self._loop_counters(owner):
            return None
        loops = [s for s in self.enclosing_statements(owner) if isinstance(s, LOOPS)]
        if any(self.changes_condition(owner.test, outer.body) for outer in loops):
            return None
        return owner

    def changes_condition(self, test: ast.expr, statements: list[ast.stmt]) -> ast.stmt | None:
        """The first of `statements` that may change what `test` evaluates to: it binds,
        deletes or stores into a name the test reads (`counts["d"] += 1`, `self.k = ...`), or
        hands such a name to a call (`budget.pop()`, `sched.step()`, `f(state)`); when the
        test reads more than the counters of the loops around the statements, any call of a
        function of the file (it may change a global)."""
        roots = {n.id for n in walk(test) if isinstance(n, ast.Name)}
        counters = self._loop_counters(statements[0]) if statements else set()
        # a function of the file may rebind a global the test reads, not a local of the
        # function around the statements (`params` of `train(..., params)`), which it can
        # change only when handed it
        around = self._function_around(statements[0]) if statements else None
        own_locals = local_names(around) if around is not None else frozenset()
        own_functions = set(self.symbols.functions)
        for statement in statements:
            for node in walk(statement):
                if _inside(node, test):
                    continue
                if _stores_into(node, roots) or _hands_to_call(node, roots - counters):
                    return statement
                calls_own = isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                if calls_own and node.func.id in own_functions and roots - counters - own_locals:
                    return statement
        return None

    def _function_around(self, statement: ast.stmt) -> FunctionNode | None:
        """The function whose body holds `statement` (directly or in blocks), or None."""
        node = statement
        while id(node) in self.parents:
            node = self.parents[id(node)][0]
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                return node
        return None

    def counts_iterations(self, test: ast.expr, loop_id: int) -> bool:
        """Whether `test` is a schedule over the loop's iterations (a step every k
        micro-batches), as gradient accumulation writes it:
        - a remainder, floor division or bit mask of a name or attribute (`(i + 1) %
          accumulation == 0`, `self.global_step % k == 0`, `(i + 1) // k * k == i + 1`);
        - a count the loop keeps, compared where the loop also sets it back to a constant
          (`if micro == k: ...; micro = 0`), tested for membership (`if i in update_steps:`)
          or handed to a function (`if is_update_step(i, k):`). A count is a name the loop's
          target binds (`for i, batch in enumerate(loader)`), one it adds to (`step += 1`,
          `step = step + 1`, `seen += len(x)`) or one it computes from a count
          (`global_step = epoch * len(loader) + i + 1`);
        - a name the loop binds to such a test (`do_step = (i + 1) % k == 0`).
        Not a test of the gradients, the loss, a setting or an outer loop's phase alone
        (`if not found_inf:`, `if norm < limit:`, `if epoch >= unfreeze_at:`,
        `if i >= warm_up:`)."""
        loop = self.loop(loop_id)
        counts = _iteration_counts(loop)
        reset = counts & _reset_in(loop)
        flags = {  # `do_step = ...`, `_, left = divmod(i + 1, k)`
            path
            for node in walk(loop)
            if isinstance(node, ast.Assign) and _is_schedule(node.value, counts, reset)
            for target in node.targets
            for bound in walk(target)
            if isinstance(bound, ast.Name | ast.Attribute)
            and (path := dotted_name(bound)) is not None
        }
        return _is_schedule(test, counts, reset) or _reads_any(test, flags)

    def steps_every_kth(self, test: ast.expr, loop_id: int) -> bool:
        """Whether `test`, guarding an optimizer step, picks one iteration in k as gradient
        accumulation does: a schedule (`counts_iterations`) that is not all but every k-th
        iteration (`if i % k != k - 1:`, `if i % k:`, a holdout batch only measured), nor a
        call of a project function whose returned value is no schedule
        (`is_trainable_step(i)` returning `i >= WARMUP`, a frozen phase)."""
        if not self.counts_iterations(test, loop_id) or _skips_every_kth(test):
            return False
        bound = _bound_once(test, self.loop(loop_id))  # `do_step = i % k != k - 1`
        if bound is not None and _skips_every_kth(bound):
            return False
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name):
            function = self.symbols.functions.get(test.func.id)
            if function is not None:
                returned = [n.value for n in walk(function) if isinstance(n, ast.Return)]
                return any(
                    r is not None and _picks_by_count(r) and not _skips_every_kth(r)
                    for r in returned
                )
        return True

    def on_schedule(self, statement: ast.stmt, loop_id: int) -> bool:
        """Whether `statement` runs only in the iterations a schedule picks: inside an `if`
        of the loop whose test counts its iterations (`counts_iterations`: `if batch_idx %
        log_interval == 0:`), on either branch."""
        loop = self.loop(loop_id)
        for owner in self.enclosing_statements(statement)[1:]:
            if owner is loop:
                return False
            if isinstance(owner, ast.If) and self.counts_iterations(owner.test, loop_id):
                return True
        return False

    def _loop_counters(self, statement: ast.stmt) -> set[str]:
        return {
            name.id
            for owner in self.enclosing_statements(statement)
            if isinstance(owner, ast.For | ast.AsyncFor)
            for name in walk(owner.target)
            if isinstance(name, ast.Name)
        }

    def may_leave_iteration(self, statement: ast.stmt) -> bool:
        """`continue` or `break` of the loop around `statement` (not of a loop inside it), or
        a `return` / `raise` anywhere in it (not in a function it defines)."""
        return _leaves(statement, False)

    def updates_weights_by_hand(self, statement: ast.stmt) -> bool:
        """Whether `statement` changes tensors in place the way a hand-written optimizer does:
        an augmented assignment or an in-place method (`add_`, `copy_`, `mul_`, ...) on
        `x.data`, on the loop variable of a loop over `parameters()`, or inside
        `with torch.no_grad():`."""
        for node in walk(statement):
            over_parameters = isinstance(node, ast.For | ast.AsyncFor) and (
                "parameters(" in ast.unparse(node.iter)
            )
            without_grad = isinstance(node, ast.With) and any(
                "no_grad" in ast.unparse(item.context_expr) for item in node.items
            )
            if (over_parameters or without_grad) and any(map(_in_place, walk(node))):
                return True
            if _in_place(node) and ".data" in ast.unparse(
                node.target if isinstance(node, ast.AugAssign) else node.func
            ):
                return True
        return False

    def peer_reads_within(self, node: ast.AST) -> list[ast.expr]:
        """Reads inside `node` of another element of a per-element list than the loop's own
        (`outputs[j]` or the whole `outputs` while `for k in range(n)` steps one element per
        iteration), whose graphs an earlier iteration's backward or step changed."""
        first, last = node.lineno, node.end_lineno
        return sorted(
            (r for r in self.observations.peer_reads.values() if first <= r.lineno <= last),
            key=lambda r: (r.lineno, r.col_offset),
        )

    def reads_another_element(self, read: ast.expr, statement: ast.stmt) -> bool:
        """Whether a peer read (`peer_reads_within`) inside `statement` provably takes another
        element than the iteration's own: an index computed from the own index
        (`outputs[1 - k]`, `outputs[(k + 1) % n]`), or a variable the code compares unequal to
        it around the read (`if j != k:`, `[... for j in range(n) if j != k]`). Not the whole
        list, a constant, or `outputs[j]` over every `j` (which includes the own element)."""
        own = self.observations.peer_owners.get(id(read))
        if own is None or not isinstance(read, ast.Subscript):
            return False
        index = read.slice
        names = {n.id for n in walk(index) if isinstance(n, ast.Name)}
        if own in names:
            return not (isinstance(index, ast.Name) and index.id == own)
        if not isinstance(index, ast.Name):
            return False
        tests = [s.test for s in self.enclosing_statements(statement) if isinstance(s, ast.If)]
        tests += [
            condition
            for node in walk(statement)
            if isinstance(node, ast.comprehension)
            for condition in node.ifs
        ]
        return any(_unequal(test, index.id, own) for test in tests)

    def update(self, update_id: int):
        return self.observations.updates[update_id]

    def writers(self, loop_id: int, var: str) -> list[ast.stmt]:
        """Statements inside the loop (innermost, in this scope) that assign `var`. A loop
        of a function is also run from the scopes calling it, where the statement writing
        is the call (`train(clips, tracker, optim)` at the bottom of the file): that one
        counts only when no statement of the loop itself is known to write it."""
        found = self.observations.writers.get((loop_id, var), [])
        loop = self.loop(loop_id)
        inside = [s for s in found if loop in self.enclosing_statements(s)]
        return inside or list(found)

    def adds_to(self, statement: ast.stmt, var: str) -> bool:
        """Whether `statement` adds to the total `var` or to an item of it (`total += 1`,
        `stats["n"] += 1`, `history["acc"].append(acc)`, `history["train"]["acc"].append(acc)`):
        a write that keeps what the total held, not a reset."""
        target = _added_to(statement)
        while isinstance(target, ast.Subscript):
            target = target.value
        return target is not None and dotted_name(target) == var

    def shape_before(self, statement: ast.stmt, var: str):
        return self.observations.shapes_before.get(id(statement), {}).get(var)

    def shape_after(self, statement: ast.stmt, var: str):
        return self.observations.shapes_after.get(id(statement), {}).get(var)

    def block_of(self, statement: ast.stmt) -> tuple[ast.AST, Block]:
        """The node owning the statement list that holds `statement`, and that list."""
        return self.parents[id(statement)]

    def enters(self, loop: ast.While) -> bool:
        """Whether a `while` loop's test holds when it is first reached, from what its block
        binds before it (`n = 0`, `warm = 2`, then `while n < warm:`): its body runs."""
        _, block = self.block_of(loop)
        return entered(loop, block[: block.index(loop)])

    def chain_in_callee(self, node: ast.AST) -> list[ast.stmt] | None:
        """The statements of the function or method (of the file or a module it imports)
        whose body holds `node`, from its body down to the statement holding `node`,
        outermost first; None when no such function holds it (or a function nested in it
        does). For a step a called function runs: under what it runs there."""
        symbols = self.symbols
        classes = [*symbols.classes.values(), *symbols.module_classes.values()]
        functions = [*symbols.functions.values(), *(m for c in classes for m in c.methods.values())]
        function = next((f for f in functions if _holds(f, node)), None)
        if function is None:
            return None
        chain: list[ast.stmt] = []
        block = function.body
        while block:
            holder = next((s for s in block if _holds(s, node)), None)
            if holder is None or isinstance(holder, ast.FunctionDef | ast.AsyncFunctionDef):
                return None
            chain.append(holder)
            handlers = [s for h in getattr(holder, "handlers", []) for s in h.body]
            block = [
                *getattr(holder, "body", []),
                *getattr(holder, "orelse", []),
                *getattr(holder, "finalbody", []),
                *handlers,
            ]
            block = [s for s in block if isinstance(s, ast.stmt)]
            if not any(_holds(s, node) for s in block):
                break
        return chain

    def enclosing_statements(self, statement: ast.stmt) -> list[ast.stmt]:
        """`statement` and the compound statements around it, innermost first."""
        chain = [statement]
        while id(chain[-1]) in self.parents:
            owner, _ = self.parents[id(chain[-1])]
            if not isinstance(owner, ast.stmt):
                break
            chain.append(owner)
        return chain

    def reads(self, node: ast.AST, var: str) -> bool:
        """Whether `node` may read `var` (a name or an attribute path such as `model.hidden`).

        Calling the object that owns an attribute path counts as reading it: `model(x)` may
        read `model.hidden` in `forward`; so do handing the owner to a call
        (`activation_reg(model, ar)`) and naming an object that keeps it (`reg()` of `reg =
        ActivationReg(model)`, `holders_of`).
        """
        owner = var.rpartition(".")[0]
        holders = self.holders_of(frozenset({owner})) if owner else frozenset()
        for child in walk(node):
            if isinstance(child, ast.Name | ast.Attribute):
                dotted = dotted_name(child) or ""
                if holders and any(shapes.within(dotted, h) for h in holders):
                    return True
                if isinstance(child.ctx, ast.Load) and shapes.within(dotted, var):
                    return True
            if owner and isinstance(child, ast.Call):
                called = dotted_name(child.func) or ""
                method = called.rpartition(".")[2]
                if called == owner or (
                    called.startswith(owner + ".") and method not in _OWNER_CALLS_WITHOUT_STATE
                ):
                    return True
                given = [*child.args, *(k.value for k in child.keywords)]
                if any(dotted_name(a) == owner for a in given):
                    return True  # `activation_reg(model, ar)` may read `model.hiddens`
        return False

    def feeds(self, source: ast.stmt, target: ast.stmt) -> bool:
        """Whether what `source` assigns reaches `target`, through the assignments of the
        block that holds both between them (`g, = torch.autograd.grad(...)`, then `pen =
        g.pow(2).sum()`, `loss = bce + pen`, reaching `loss.backward()`)."""
        if id(source) not in self.parents or id(target) not in self.parents:
            return False
        _, block = self.block_of(source)
        if target not in block or block.index(target) <= block.index(source):
            return False
        carried = set(assigned_paths(source))
        for statement in block[block.index(source) + 1 : block.index(target)]:
            if any(self.reads(statement, var) for var in carried):
                carried |= set(assigned_paths(statement))
        return any(self.reads(target, var) for var in carried)

    def first_reader(self, loop: ast.AST, variables: list[str]) -> ast.stmt | None:
        """The first statement of the loop body that may read one of `variables`."""
        for statement in loop.body:
            if any(self.reads(statement, var) for var in variables):
                return statement
        return None

    def read_later_in_iteration(
        self, statement: ast.stmt, loop: ast.AST, variables: list[str]
    ) -> bool:
        """Whether a statement after `statement`, before the loop's next iteration, may read
        one of `variables`."""
        current = statement
        while current is not loop:
            if id(current) not in self.parents:
                return True
            owner, block = self.parents[id(current)]
            later = block[block.index(current) + 1 :]
            if any(self.reads(s, var) for s in later for var in variables):
                return True
            readers = set().union(*(self._readers_of(var) for var in variables))
            if readers and any(_calls_named(s, readers) for s in later):
                return True  # `penalty()` of `def penalty(): return hidden.pow(2).mean()`
            current = owner
        return False

    def _readers_of(self, var: str) -> frozenset[str]:
        """The functions of the file (nested ones too) and the names bound to a lambda that
        read the plain name `var` without binding it: a call of one reads the enclosing
        function's or the module's `var`."""
        if "." in var:
            return frozenset()
        found = self._readers.get(var)
        if found is None:
            found = self._readers[var] = frozenset(
                name for name, body in _callables(self.tree) if _reads_free(body, var)
            )
        return found

    def exposed_modules(
        self, backward_id: int, loop_id: int | ast.AST, modules: set[str]
    ) -> set[str] | None:
        """The paths among `modules` that the backward's loss depends on directly, not only
        behind another module's input (`exposure.py`), from the loop's statements before the
        backward; None when the loss is not built there."""
        from loopfix.model.exposure import exposed_modules

        site = self.backward(backward_id)
        call = site.call
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
            return None
        loop, start = self.region(loop_id), (site.statement.lineno, site.statement.col_offset)
        before = sorted(
            (
                s
                for s in walk(loop)
                if isinstance(s, ast.Assign | ast.AugAssign | ast.AnnAssign)
                and (s.end_lineno, s.end_col_offset) <= start
                and s is not loop
            ),
            key=lambda s: (s.lineno, s.col_offset),
        )
        return exposed_modules(before, call.func.value, modules, self._plain_function)

    def _plain_function(self, func: ast.expr) -> FunctionNode | None:
        """The one project function (not a method) a call of `func` runs, or None."""
        name = dotted_name(func) or ""
        if not name or ("." not in name and name not in self.symbols.functions):
            return None
        callees = project_callees(func, self.symbols)
        return callees[0] if len(callees) == 1 else None

    def may_clear_gradients(
        self, statements: list[ast.stmt], keep: set[str], names: set[str]
    ) -> bool:
        """Whether any of `statements` may clear or overwrite gradients other than those of
        `keep` (optimizer and module paths): a `zero_grad()` of anything else (a wrapper
        module, a helper's parameter), `.grad` written or zeroed, `zero_()` /
        `_foreach_zero_`, or a call given one of `names` (`reset(G)`, `clear(opt_g)`)."""
        for statement in statements:
            for node in walk(statement):
                if isinstance(node, ast.Attribute) and node.attr in GRADIENT_ATTRIBUTES:
                    return True
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("zero_", "_foreach_zero_", "fill_"):
                    return True
                if name == "zero_grad" and dotted_name(getattr(func, "value", None)) not in keep:
                    return True
                given = [dotted_name(a) for a in [*node.args, *(k.value for k in node.keywords)]]
                if any(g is not None and g.split(".")[0] in names for g in given):
                    return True
        return False

    def toggles_requires_grad(self, loop_id: int) -> bool:
        """Whether the loop turns parameters' `requires_grad` on or off while it runs
        (`set_requires_grad(netD, False)`, `p.requires_grad = False`, `requires_grad_`),
        itself or through a function of the file it calls: then a backward may leave some
        modules' gradients alone although its graph goes through them (`loop_id` may be a
        function, as for `clears_gradients_by_hand`)."""
        return self._answer(self._toggles_requires_grad, loop_id)

    def _toggles_requires_grad(self, loop_id: int) -> bool:
        loop = self.region(loop_id)
        words = {"requires_grad", "requires_grad_", "set_requires_grad", "toggle_grad"}
        called = set()
        for node in walk(loop):
            if isinstance(node, ast.Attribute) and node.attr in words:
                return True
            if isinstance(node, ast.Name) and node.id in words:
                return True
            if isinstance(node, ast.keyword) and node.arg == "requires_grad":
                return True
            if isinstance(node, ast.Call):
                called.add(dotted_name(node.func) or "")
        functions = self.symbols.functions
        for name in called:
            short = name.rpartition(".")[2]
            function = functions.get(name) or functions.get(short)
            if function is not None and any(
                isinstance(n, ast.Attribute) and n.attr in words for n in walk(function)
            ):
                return True
        return False

    def reverses_gradients(self, loop_id: int) -> bool:
        """Whether gradients are changed on their way through the iteration, as a gradient
        reversal layer does (DANN): a tensor's `register_hook`, or a custom autograd
        function's `apply`, in the loop, in a project function it calls (four calls deep), or
        in a method of a project module class the file uses. Then a loss meant for one
        network that reaches another's parameters is the design, not a leak. `loop_id` may
        be a function, as for `clears_gradients_by_hand`."""
        return self._answer(self._reverses_gradients, loop_id)

    def _reverses_gradients(self, loop_id: int) -> bool:
        symbols = self.symbols
        if symbols.remember(("module reverses", 0), _module_class_reverses, symbols):
            return True
        return _anywhere_called(self.region(loop_id), symbols, _reverses)

    def saved_tensor_changes(self) -> list:
        """In-place changes of tensors autograd saved whose backward will run (`saved.py`):
        in the methods of the module's `nn.Module` classes and in its training code."""
        if self._saved_changes is None:
            from loopfix.model.saved import saved_tensor_changes

            self._saved_changes = saved_tensor_changes(
                self.tree, self.symbols, self.index, self.kept, self.pieces
            )
        return self._saved_changes

    def names_in_use(self) -> frozenset[str]:
        """Every name the module's code uses, and its functions' (read once: a fix that
        adds a name asks for each placement it tries)."""
        if self._names is None:
            used = set(self.symbols.functions)
            for statement in self.tree.body:
                used |= kept_fact(self.kept, "names", statement, lambda s=statement: _names_used(s))
            self._names = frozenset(used)
        return self._names

    def detaching_functions(self) -> list[str]:
        """Module-level functions that return their argument detached (`repackage_hidden`)."""
        return [
            name
            for name, function in self.symbols.functions.items()
            if _returns_detached(function, self.symbols)
        ]


def build_model(
    tree: ast.Module, every_scope: bool = False, resolver=None, pieces=None, kept=None
) -> LoopModel:
    """The model of `tree`; scopes that cannot hold a finding are skipped unless
    `every_scope` (for questions about code without a backward pass; an evaluation helper,
    a function with no backward whose loops add to totals, runs in either case only when a
    call reached it with grad enabled). `resolver` links
    the project modules the file imports (`loopfix.project.Resolver`).

    The modules that import it run first, for what they pass (`record_calls_into`); then
    its own scopes (`_run_scopes`). `pieces`: the parser's index of each statement it reused
    (`index_tree`); `kept`: what it keeps of the statements it gave back (`ChunkParser`)."""
    index = index_tree(tree, pieces)
    symbols = collect_symbols(tree, index, resolver)
    observations = Observations()
    call_sites = CallSites()
    callers = getattr(resolver, "callers", None)
    autograd = _autograd_scopes(index, symbols)

    def any_but_evaluation_helpers(scope) -> bool:  # those run when called with grad
        return scope is tree or autograd(scope) or not _keeps_totals_in_loops(scope)

    relevant = any_but_evaluation_helpers if every_scope else autograd
    # what callers pass in binds only the parameters of functions and methods that run
    if callers is None or not any(relevant(function) for _, function in index.functions):
        callers = None
    statements_run = 0
    chain = callers(symbols) if callers is not None else []
    towards = {id(symbols)} | {id(caller_symbols) for _, caller_symbols in chain}
    for caller_tree, caller_symbols in chain:
        budget = CALLERS_BUDGET - statements_run
        if budget <= 0:
            break
        statements_run += record_calls_into(
            caller_tree, caller_symbols, call_sites, budget, towards
        )
    for adopted in call_sites.classes.values():
        if adopted is not None:
            symbols.adopt(*adopted)
    instances = Instances(symbols, call_sites)
    interpreter = Interpreter(symbols, observations, instances, kept=kept)
    interpreter.external_callers = bool(chain)
    _run_scopes(interpreter, tree, index, relevant, _keeps_totals_in_loops)
    model = LoopModel(tree=tree, symbols=symbols, observations=observations)
    model.summaries = interpreter.summaries
    model.statements_run = statements_run + interpreter.statements_run
    model.parents = index.parents
    model.index = index
    model.pieces, model.kept = pieces, kept
    return model


def record_calls_into(
    tree: ast.Module,
    caller: Symbols,
    call_sites: CallSites,
    budget: int | None = None,
    towards: set[int] | None = None,
) -> int:
    """Run the scopes of another project module (`caller`) that name something of another
    project module (the one being analysed among them), only to record what its calls pass
    to those modules' functions and constructors (networks built in `main.py` and handed to
    `Trainer(...)`, an optimizer passed to `train(model, loader, optimizer)`, the graph of a
    tensor a loss object is given). Its own observations are dropped: findings belong to
    the module that holds the code. It stops after `budget` statements (a `main()` that
    builds a whole framework's objects), keeping the sites recorded by then. `towards`: the
    ids of the symbols of the modules its calls can reach the analysed one through (that
    module and the others calling into it); only the scopes naming a function, class or
    module of one of those run (None: of any other module). Returns the statements it
    interpreted."""

    def reaches(home: Symbols) -> bool:
        return home is not caller and (towards is None or id(home) in towards)

    linked = {
        name
        for name, node in [
            *caller.functions.items(),
            *((n, i.node) for n, i in caller.classes.items()),
        ]
        if reaches(caller.home(node))
    } | {name for name, module in caller.modules.items() if reaches(module)}
    # and the methods of those classes that do autograd work:
    # `self.inpaint_model.backward(gen_loss, dis_loss)` in a trainer method, on a model its
    # `__init__` built
    linked |= {
        name
        for info in caller.classes.values()
        if reaches(caller.home(info.node))
        for name, method in info.methods.items()
        if not _dunder(name) and id(method) in _autograd_work_of(caller.home(info.node))
    }
    if not linked:
        return 0
    index = caller.index if caller.tree is tree and caller.index is not None else index_tree(tree)
    interpreter = Interpreter(caller, Observations(), Instances(caller, call_sites))
    interpreter.budget = budget
    with contextlib.suppress(BudgetSpent):  # what was passed by then stays recorded
        _run_scopes(interpreter, tree, index, lambda scope: bool(index.words[id(scope)] & linked))
    return interpreter.statements_run


def _run_scopes(
    interpreter: Interpreter, tree: ast.Module, index: TreeIndex, relevant, deferred=None
) -> None:
    """The module body, then every function and method that is `relevant` as its own scope,
    callers before callees, each starting from what the calls seen so far pass it (a method:
    the instance its class builds; a tensor argument: a graph of the modules that built it
    at every call site). A function that is not, but passes `deferred`, runs too when a call
    the scopes before it ran reached it with grad enabled (`CallSites.called_with_grad`):
    an evaluation helper called from a training loop without `torch.no_grad()`."""
    symbols, instances = interpreter.symbols, interpreter.instances
    if relevant(tree):
        final = interpreter.run_scope(tree.body, Frame(), {})
        instances.module_shapes = {k: v.shape for k, v in final.items() if "#" not in k}
    classes_by_node = {id(info.node): info for info in symbols.classes.values()}
    scopes = [
        (owner, function)
        for owner, function in index.functions
        if relevant(function) or (deferred is not None and deferred(function))
    ]
    called_with_grad = instances.call_sites.called_with_grad
    for class_node, function in _callers_first(scopes, index):
        if not relevant(function) and id(function) not in called_with_grad:
            continue
        owner = classes_by_node.get(id(class_node)) if class_node is not None else None
        frame = Frame(self_path="self" if owner is not None else None, cls=owner)
        env = _scope_env(function, owner, instances)
        for site, paths in instances.call_sites.parameter_sites.items():
            interpreter.obs.site_modules.setdefault(site, set()).update(paths)
        interpreter.run_scope(function.body, frame, env, function)


LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _keeps_totals_in_loops(function: FunctionNode) -> bool:
    """Whether `function` has a loop with a statement that adds to something (`total +=
    loss`, `total = total + loss`, `losses.append(loss)`): what LF006 asks about, even in a
    function with no backward pass (an evaluation helper). Its statements are looked at,
    not every expression: it is asked of every function of the file."""
    stack = [(statement, False) for statement in function.body]
    while stack:
        statement, in_loop = stack.pop()
        if in_loop and _added_to(statement) is not None:
            return True
        inside = in_loop or isinstance(statement, LOOPS)
        for name in BLOCK_FIELDS:
            for child in getattr(statement, name, None) or ():
                if isinstance(child, ast.excepthandler | ast.match_case):
                    stack += [(s, inside) for s in child.body]
                elif not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    stack.append((child, inside))
    return False


def _added_to(statement: ast.stmt) -> ast.expr | None:
    """What `statement` adds to, keeping what it held: the target of `total += x` or `total =
    total + x`, the list of `losses.append(x)` or `losses.extend(xs)`; None for any other
    statement."""
    value = getattr(statement, "value", None)
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, ast.Add):
        return statement.target
    if isinstance(statement, ast.Assign) and isinstance(value, ast.BinOp):
        target, left = statement.targets[0], value.left
        same = syntax_key(target, context=False) == syntax_key(left, context=False)
        return target if isinstance(value.op, ast.Add) and same else None
    if (
        isinstance(statement, ast.Expr)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr in ("append", "extend")
    ):
        return value.func.value
    return None


def _scope_env(function, owner: ClassInfo | None, instances: Instances) -> dict:
    """A function's parameters as its own scope starts: what its call sites pass, else
    whatever a caller may pass; a method's `self` is an instance of its class."""
    env = {a.arg: _parameter_value(a) for a in _parameters(function)}
    visible = set(instances.symbols.globals) | {a.arg for a in _parameters(function)}
    if owner is not None:
        visible.add("self")
    env.update(instances.call_sites.parameter_values(function, visible))
    first = function.args.posonlyargs + function.args.args
    if owner is not None and first and first[0].arg == "self":
        env["self"] = EMPTY.with_shape(self_shape(owner))
        for name, value in instances.attributes(owner).items():
            env.setdefault(f"self.{name}", value)  # as __init__ left it (None, a tensor...)
    return env


def _callers_first(entries: list, index: TreeIndex) -> list:
    """`entries` ((class, function) pairs) in an order where a function comes before those it
    names (by name, or a method by its class's name), so that its calls are recorded before
    they run as their own scopes; source order otherwise, and within a cycle."""
    names = [
        {function.name} | ({owner.name} if owner is not None else set())
        for owner, function in entries
    ]
    callers = [
        {j for j, (_, other) in enumerate(entries) if j != i and index.words[id(other)] & names[i]}
        for i in range(len(entries))
    ]
    waiting = [len(c) for c in callers]  # callers not yet placed
    callees = [[i for i in range(len(entries)) if j in callers[i]] for j in range(len(entries))]
    done: list[int] = []
    placed = [False] * len(entries)
    for _ in range(len(entries)):
        # the first function (in source order) all of whose callers are placed; in a cycle,
        # the first one left
        ready = next((i for i in range(len(entries)) if not placed[i] and not waiting[i]), None)
        if ready is None:
            ready = placed.index(False)
        placed[ready] = True
        done.append(ready)
        for callee in callees[ready]:
            waiting[callee] -= 1
    return [entries[i] for i in done]


# Words of a scope that writes a backward pass: `loss.backward()`, `torch.autograd.grad(...)`
# (its `grad`), `backward(retain_graph=True)`. `autograd` alone is not one: real code says
# it in `torch.autograd.profiler.record_function(...)`, `set_detect_anomaly` and `Variable`,
# and a beam search that profiles itself would be interpreted whole for nothing.
AUTOGRAD_WORDS = frozenset({"backward", "grad", "retain_graph", "retain_variables"})
IMPLICIT_CALLS = frozenset({"forward", "__call__"})  # reached without their name being written


def autograd_words(symbols: Symbols) -> frozenset[str]:
    """`AUTOGRAD_WORDS` and the names the module binds to `torch.autograd.grad` or
    `torch.autograd.backward` (`from torch.autograd import grad as torch_grad`)."""
    aliases = {name for name, target in symbols.imports.items() if target in BACKWARD_FUNCTIONS}
    return AUTOGRAD_WORDS | aliases if aliases else AUTOGRAD_WORDS


def _autograd_scopes(index: TreeIndex, symbols: Symbols):
    """A test for whether a scope (the module or a function) can hold a finding: every rule
    is about a backward pass, so a scope that mentions none (`autograd_words`: `backward`,
    `grad`, `retain_graph`, an alias of `torch.autograd.grad`), no function of this file
    that (transitively) does, and nothing imported that does (`_imported_autograd_names`)
    is skipped. The model's cost then follows the training code in a file, not its model
    and data code. A custom `torch.autograd.Function`'s methods count only by the calls
    they make (`_called_words`). A process or thread class whose `run` does (an A3C worker,
    `class Agent(mp.Process)`) counts by its name: `start()` runs it without naming it."""
    formulas = _formula_methods(index, symbols)
    words_of = _words_of(index, formulas)
    names = _function_words(index, formulas)
    words = autograd_words(symbols)
    reaching = _reaching(names, words, _imported_autograd_names(symbols))
    if reaching & IMPLICIT_CALLS:
        return lambda scope: True  # a module whose forward steps: anything may reach it
    triggers = words | reaching | _started_workers(symbols, reaching)
    return lambda scope: bool(words_of(scope) & triggers)


def _started_workers(symbols: Symbols, reaching: set[str]) -> set[str]:
    """The names of the module's process and thread classes whose `run` reaches autograd
    work (`reaching`: function names)."""
    if "run" not in reaching:
        return set()
    return {
        name
        for name, info in symbols.classes.items()
        if "run" in info.methods
        and any(symbols.qualify(base) in WORKER_CLASSES for base in info.node.bases)
    }


def _reaching(names: dict[str, set[str]], words: frozenset[str], given: set[str]) -> set[str]:
    """`given` and the functions (by name, `names`: name -> the words its body mentions)
    that mention one of `words`, or a name found so far (transitively)."""
    return named_closure(
        names, set(given) | {name for name, found in names.items() if found & words}
    )


def _words_of(index: TreeIndex, formulas: set[int]):
    """The words a scope mentions (`index.words`; a custom autograd function's method: the
    calls it makes)."""
    return lambda scope: _called_words(scope) if id(scope) in formulas else index.words[id(scope)]


def _function_words(index: TreeIndex, formulas: set[int]) -> dict[str, set[str]]:
    """Function name (methods too) -> the words its bodies mention (`index.names`, with a
    custom autograd function's methods by the calls they make)."""
    if not formulas:
        return index.names
    words_of = _words_of(index, formulas)
    names: dict[str, set[str]] = {}
    for _, function in index.functions:
        names.setdefault(function.name, set()).update(words_of(function))
    return names


# the bases of a custom autograd function, as `Symbols.qualify` names them
AUTOGRAD_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})


def _formula_methods(index: TreeIndex, symbols: Symbols) -> set[int]:
    """The ids of the methods of the module's custom autograd functions."""
    return {
        id(function)
        for owner, function in index.functions
        if owner is not None and is_autograd_function(owner, symbols)
    }


def is_autograd_function(cls: ast.ClassDef, symbols: Symbols) -> bool:
    """`class GradMultiply(torch.autograd.Function)`: a custom autograd function, whose
    `backward(ctx, grad)` is the gradient formula autograd calls, not a backward pass."""
    return any(symbols.qualify(base) in AUTOGRAD_FUNCTION_BASES for base in cls.bases)


def _module_class_reverses(symbols: Symbols) -> bool:
    """Whether a method of an `nn.Module` class the module sees reverses gradients (asked
    once per module, not once per loop)."""
    classes = [*symbols.classes.values(), *symbols.module_classes.values()]
    return any(
        info.is_module
        and any(
            _anywhere_called(method, symbols.home(info.node), _reverses)
            for method in info.methods.values()
        )
        for info in classes
    )


def _names_zero_grad(node: ast.AST) -> bool:
    """`x.zero_grad` called or not (`clear = model.zero_grad`), or `_foreach_zero_`."""
    return isinstance(node, ast.Attribute) and node.attr in ("zero_grad", "_foreach_zero_")


def _touches_gradients(node: ast.AST, symbols: Symbols) -> bool:
    """`_handles_gradients`, or a `zero_grad` named."""
    return _handles_gradients(node, symbols) or _names_zero_grad(node)


def _nested_functions(scope: ast.AST | None) -> dict[str, ast.AST]:
    """The functions defined inside `scope` (a function's closures), by name."""
    if scope is None:
        return {}
    return {
        node.name: node
        for node in walk(scope)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node is not scope
    }


def _statements_of_iteration(loop: ast.AST) -> list[ast.stmt]:
    """The statements one iteration of `loop` runs, in blocks (`if`, `with`, `try`) but not
    in the loops inside it."""
    found: list[ast.stmt] = []
    todo = list(reversed(loop.body))
    while todo:
        statement = todo.pop()
        found.append(statement)
        if isinstance(statement, ast.For | ast.AsyncFor | ast.While):
            continue
        for name in ("body", "orelse", "finalbody"):
            todo += reversed(getattr(statement, name, None) or [])
        for handler in getattr(statement, "handlers", None) or []:
            todo += reversed(handler.body)
    return found


# how far `_anywhere_called` follows calls: a trainer's `update()` calling `_on_step_end()`
# calling `_clear()` is three calls from the loop
CALLS_DEEP = 4


def _anywhere_called(
    node: ast.AST, symbols: Symbols, test, depth: int = 0, seen: set[int] | None = None
) -> bool:
    """Whether `test(n, symbols)` holds for a node below `node` or in the body of a project
    function or method it calls (methods by name, of the classes the module sees), following
    calls while `depth` < `CALLS_DEEP` with the callee's module's symbols; each body is read
    once."""
    seen = {id(node)} if seen is None else seen
    holds, callees = symbols.remember(
        (f"anywhere {test.__name__}", id(node)), lambda n: _tested_below(n, symbols, test), node
    )
    if holds:
        return True
    if depth >= CALLS_DEEP:
        return False
    for callee in callees:
        if id(callee) in seen:
            continue
        seen.add(id(callee))
        if _anywhere_called(callee, symbols.home(callee), test, depth + 1, seen):
            return True
    return False


def _object_bindings(tree: ast.Module) -> tuple[tuple[str, ast.expr, ast.stmt], ...]:
    """(target, the value bound to it, the assignment) for each assignment of one name or
    attribute path (`ema = EMA(D)`), and (owner, value, assignment) for each attribute set
    on an object other than `self` (`ema.model = D` gives `ema` a reference; a method's
    `self.model = model` is read through `self.model`)."""
    found: list[tuple[str, ast.expr, ast.stmt]] = []
    for node in walk(tree):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        path = dotted_name(target) if isinstance(target, ast.Name | ast.Attribute) else None
        if path is None:
            continue
        found.append((path, node.value, node))
        owner = path.rpartition(".")[0]
        if isinstance(target, ast.Attribute) and owner != "self":
            found.append((owner, node.value, node))
    return tuple(found)


def _callables(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    """(name, function) for every function of the tree, nested ones too, and for every name
    bound to a lambda (`penalty = lambda: hidden.pow(2).mean()`)."""
    found: list[tuple[str, ast.AST]] = []
    for node in walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((node.name, node))
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Lambda)
        ):
            found.append((node.targets[0].id, node.value))
    return found


def _reads_free(function: ast.AST, var: str) -> bool:
    """Whether `function` (a `def` or a lambda) reads `var` and does not bind it as its own
    (a parameter, or a local it does not declare `nonlocal` or `global`)."""
    if var in parameter_names(function):
        return False
    read = False
    for node in walk(function):
        if isinstance(node, ast.Name) and node.id == var:
            if not isinstance(node.ctx, ast.Load):
                lambda_ = isinstance(function, ast.Lambda)
                return not lambda_ and var in declared_outside(function)
            read = True
    return read


def _calls_named(statement: ast.AST, names: set[str] | frozenset[str]) -> bool:
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
        for n in walk(statement)
    )


def _tensor_or_optimizer(shape) -> bool:
    shape = shapes.present(shape) if shape is not None else None
    return shape == shapes.TENSOR or shapes.is_optimizer(shape)


def _tested_below(node: ast.AST, symbols: Symbols, test) -> tuple[bool, tuple[FunctionNode, ...]]:
    """Whether `test` holds for a node below `node`, and the project functions its calls may
    run, in the order they are called (a body asked about from every loop and call site that
    reaches it is walked once per module)."""
    callees: list[FunctionNode] = []
    for child in walk(node):
        if test(child, symbols):
            return True, ()
        callees += _run_by(child, symbols)
    return False, tuple(callees)


def _run_by(node: ast.AST, symbols: Symbols) -> list[FunctionNode]:
    """The project functions `node` may run: a call's (`project_callees`), with those it is
    handed to call (`local.apply(drop_grads)`, `map(f, xs)`); a `with` item's class's
    `__enter__` and `__exit__` (`with LocalUpdate(model):`)."""
    if isinstance(node, ast.Call):
        handed = [*node.args, *(k.value for k in node.keywords)]
        return [
            *project_callees(node.func, symbols),
            *(
                f
                for a in handed
                if isinstance(a, ast.Name)
                or (isinstance(a, ast.Attribute) and isinstance(symbols.member(a), ast.AST))
                for f in project_callees(a, symbols)
            ),
        ]
    if isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call):
        info = symbols.class_named(dotted_name(node.context_expr.func) or "")
        methods = info.methods if isinstance(info, ClassInfo) else {}
        return [methods[m] for m in ("__enter__", "__exit__") if m in methods]
    return []


def _reverses(node: ast.AST, symbols: Symbols) -> bool:
    """A tensor's `register_hook(...)` or a custom autograd function's `apply(...)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return False
    func = node.func
    if func.attr == "register_hook":
        return True
    if func.attr != "apply":
        return False
    name = dotted_name(func.value)
    info = symbols.class_named(name) if name and "." not in name else None
    if info is None and name is not None:
        member = symbols.member(func.value)
        info = member if isinstance(member, ClassInfo) else None
    return info is not None and is_autograd_function(info.node, symbols.home(info.node))


# hooks PyTorch runs around every optimizer step (`torch.optim.Optimizer`'s, and the global
# ones of `torch.optim.optimizer`)
STEP_HOOKS = frozenset(
    {
        "register_step_pre_hook",
        "register_step_post_hook",
        "register_optimizer_step_pre_hook",
        "register_optimizer_step_post_hook",
    }
)


def _registers_clearing_hook(node: ast.AST, symbols: Symbols) -> bool:
    """A step hook registered (whatever it does), or another hook (`register_*hook`) whose
    function names `zero_grad` or sets `.grad`, or that cannot be read (not a lambda or a
    function of the module)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in STEP_HOOKS:
        return True
    if not (name.startswith("register_") and name.endswith("hook")):
        return False
    for hook in [*node.args, *(k.value for k in node.keywords)][:1]:
        body = symbols.functions.get(hook.id) if isinstance(hook, ast.Name) else hook
        if not isinstance(body, ast.Lambda | ast.FunctionDef):
            return True
        if any(_names_zero_grad(n) or _sets_gradients(n, symbols) for n in walk(body)):
            return True
    return False


def _assigned_state(loop: ast.AST) -> set[str]:
    """Paths of the modules whose `load_state_dict(..., assign=True)` the loop calls: their
    parameters are replaced by new tensors, which have no gradients."""
    return {
        path
        for node in walk(loop)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "load_state_dict"
        and any(
            k.arg == "assign" and not (isinstance(k.value, ast.Constant) and not k.value.value)
            for k in node.keywords
        )
        and (path := dotted_name(node.func.value)) is not None
    }


def _made_by_project_calls(scope: ast.AST, symbols: Symbols) -> dict[str, list[FunctionNode]]:
    """Names the scope (or the module) binds to what a project function's call returns
    (`clear = hooks.make_clear(model)`), with those functions."""
    made: dict[str, list[FunctionNode]] = {}
    for node in (n for s in {scope, symbols.tree} - {None} for n in walk(s)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            callees = list(project_callees(node.value.func, symbols))
            for target in node.targets:
                if isinstance(target, ast.Name) and callees:
                    made.setdefault(target.id, []).extend(callees)
    return made


def _runs_backward(node: ast.AST, symbols: Symbols) -> bool:
    """`x.backward(...)`, `backward(...)` or `torch.autograd.backward(...)` / `.grad(...)`."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name == "backward" or symbols.qualify(func) in BACKWARD_FUNCTIONS


def _sets_gradients(node: ast.AST, symbols: Symbols) -> bool:
    """`p.grad = None`, `del p.grad`, `p.grad.zero_()`, `p.grad.data.mul_(0)`."""
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
        return node.attr in GRADIENT_ATTRIBUTES
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr.endswith("_") and ".grad" in ast.unparse(node.func)
    return False


def _may_set_gradients(node: ast.AST, symbols: Symbols) -> bool:
    """`_sets_gradients`, or a method called by a name chosen at run time (`getattr(cb,
    event)()`, a callback list's dispatch), which may be one that clears them."""
    return _sets_gradients(node, symbols) or _called_by_name(node)


def _handles_gradients(node: ast.AST, symbols: Symbols) -> bool:
    """`p.grad` (read, written or changed), `torch.autograd.grad(...)` or `grad(...)`, or a
    method called by a name chosen at run time."""
    if isinstance(node, ast.Attribute) and node.attr in GRADIENT_ATTRIBUTES:
        return True
    if isinstance(node, ast.Name) and node.id == "grad":
        return True
    return _called_by_name(node)


# methods that compute a new value from a tensor and leave it as it is (not `detach`, whose
# result shares its storage, nor `data`)
MEASURES = frozenset(
    {"norm", "abs", "sum", "mean", "max", "min", "std", "var", "item", "tolist", "numel", "clone"}
)


def _gradients_only_measured(node: ast.AST) -> set[int]:
    """The ids of the `.grad` reads below `node` whose only use is a measure of them
    (`shared.weight.grad.norm().item()` logged after the step): reading a gradient so
    changes nothing a `zero_grad()` would."""
    return {
        id(call.func.value)
        for call in walk(node)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in MEASURES
        and isinstance(call.func.value, ast.Attribute)
        and call.func.value.attr == "grad"
    }


def _called_by_name(node: ast.AST) -> bool:
    """`getattr(obj, name)(...)` with a name that is not a constant."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Call):
        return False
    lookup = node.func
    return (
        isinstance(lookup.func, ast.Name)
        and lookup.func.id == "getattr"
        and len(lookup.args) >= 2
        and not isinstance(lookup.args[1], ast.Constant)
    )


def assigned_paths(statement: ast.stmt) -> list[str]:
    """The names and attribute paths `statement` assigns, in source order."""
    stored = [
        (node.lineno, node.col_offset, dotted)
        for node in walk(statement)
        if isinstance(node, ast.Name | ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and (dotted := dotted_name(node))
    ]
    return [name for _, _, name in sorted(stored)]


def _calls_zero_grad(node: ast.AST, symbols: Symbols) -> bool:
    """A call of any `zero_grad` (an optimizer's, a module's, a wrapper's)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "zero_grad"
    )


CLEARING_NAMES = frozenset(
    {"zero_grad", "_foreach_zero_", "register_step_post_hook", "register_step_pre_hook"}
)


def _names_clearing(symbols: Symbols) -> bool:
    """Whether the module reads an attribute that clears gradients or hooks an optimizer
    step, or names `zero_grad` in a string (`getattr(opt, "zero_grad")`)."""
    index, tree = symbols.index, symbols.tree
    if index is None or tree is None:
        return True
    if CLEARING_NAMES & index.attributes:
        return True
    return symbols.remember(("names zero_grad", 0), _says_zero_grad, tree)


def _says_zero_grad(tree: ast.AST) -> bool:
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and "zero_grad" in n.value
        for n in walk(tree)
    )


def _plain_path(path: str | None) -> bool:
    """`opt`, `self.opt`, `trainer.opt_g`: a path the code can name as it is."""
    return bool(path) and all(part.isidentifier() for part in path.split("."))


def _called_words(node: ast.AST) -> set[str]:
    """The last names of the calls below `node` (`backward` in `torch.autograd.backward(...)`;
    `grad` in `grad * ctx.scale` does not count) and their keywords' names."""
    words = set()
    for call in walk(node):
        if isinstance(call, ast.Call):
            func = call.func
            if isinstance(func, ast.Name | ast.Attribute):
                words.add(func.id if isinstance(func, ast.Name) else func.attr)
            words.update(k.arg for k in call.keywords if k.arg)
    return words


def _imported_autograd_names(symbols: Symbols) -> set[str]:
    """Names this module's scopes may call that do autograd work in another project module
    (`_autograd_work_of`): functions and classes imported from one (a `losses.py` helper
    that calls `backward()`, a model whose forward steps, a `train_step` that hands its loss
    to the module's `backprop`), the functions and classes of a module imported whole
    (`optim_utils.backprop(loss, optimizer)`), and the methods the file's classes inherit
    from another module's class (`self.take_optimisation_step(optimizer, loss)` of a base
    agent, which calls its own `self._backprop`), and the methods of classes imported from
    another project module that do such work (`self.agent.update(x)` of an `Agent` built in
    the trainer's `__init__`)."""
    names = set()
    for name, node in [
        *symbols.functions.items(),
        *((n, i.node) for n, i in symbols.classes.items()),
    ]:
        home = symbols.home(node)
        if home is not symbols and id(node) in _autograd_work_of(home):
            names.add(name)
    for name, function in symbols.functions.items():
        home = symbols.home(function)
        if home is symbols:
            continue
        key = ("returned classes", id(function))
        for info in home.remember(key, lambda f, h=home: _returned_classes(f, h), function):
            working = _autograd_work_of(home.home(info.node))
            if id(info.node) in working:  # a factory: `model = CreateModel(opt)`
                names.add(name)
                names |= {n for n, m in info.methods.items() if id(m) in working and not _dunder(n)}
    for info in symbols.classes.values():
        home = symbols.home(info.node)
        working = _autograd_work_of(home) if home is not symbols else frozenset()
        if id(info.node) in working:
            names |= {
                n for n, method in info.methods.items() if id(method) in working and not _dunder(n)
            }
    for module in symbols.modules.values():
        if module is not symbols:
            working = _autograd_work_of(module)
            names |= {n for n, f in module.functions.items() if id(f) in working}
            names |= {n for n, i in module.classes.items() if id(i.node) in working}
    for info in symbols.classes.values():
        if symbols.home(info.node) is not symbols:
            continue
        for base in symbols.file_bases(info):
            working = _autograd_work_of(symbols.home(base.node))
            names |= {
                n for n, method in base.methods.items() if id(method) in working and not _dunder(n)
            }
    return names


def _returned_classes(function: FunctionNode, home: Symbols) -> list[ClassInfo]:
    """The project classes whose objects `function` builds and returns, as its own module
    names them: `return Net(...)`, or a name bound to `Net(...)` that a `return` gives back
    (a factory: `model = DRGAN(); model.initialize(); return model`)."""
    built: dict[str, list[ClassInfo]] = {}
    returns: list[ast.expr] = []
    for node in walk(function):
        if isinstance(node, ast.Return) and node.value is not None:
            returns.append(node.value)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, info = node.targets[0], _class_called(node.value, home)
            if isinstance(target, ast.Name) and info is not None:
                built.setdefault(target.id, []).append(info)
    found: list[ClassInfo] = []
    for value in returns:
        info = _class_called(value, home)
        found += [info] if info is not None else built.get(getattr(value, "id", None), [])
    return found


def _class_called(node: ast.expr, home: Symbols) -> ClassInfo | None:
    """The project class `node` builds (`Net(...)`, `models.Net(...)`), as `home` names it."""
    if not isinstance(node, ast.Call):
        return None
    if isinstance(node.func, ast.Name):
        return home.class_named(node.func.id)
    found = home.member(node.func)
    return found if isinstance(found, ClassInfo) else None


def _autograd_work_of(home: Symbols) -> frozenset[int]:
    """The ids of the functions, methods and classes of the project module `home` that do
    autograd work: a function that says a backward pass's words (`autograd_words`; a custom
    autograd function's methods only by the calls they make), or names a function or method
    of the module that does (transitively, by name; not a dunder such as `__init__`, which
    `super().__init__()` names in every class); a class one of whose methods does. Read once
    per module for the run. What a module imports does not count: a framework's modules
    all name its `Trainer` or `Strategy`, and following those would make every one of its
    functions a training step to interpret (4 x the statements on the real tree of
    `docs/figures.md`, for no finding)."""
    key = ("autograd work", 0)
    if key not in home.facts:
        home.facts[key] = _autograd_work(home)
    return home.facts[key]


def _autograd_work(home: Symbols) -> frozenset[int]:
    index = home.index
    if index is None:  # still being collected
        return frozenset()
    formulas = _formula_methods(index, home)
    names = _function_words(index, formulas)
    names = {name: found for name, found in names.items() if not _dunder(name)}
    words = autograd_words(home)
    reaching = _reaching(names, words, set()) | words
    words_of = _words_of(index, formulas)
    working = {id(function) for _, function in index.functions if reaching & words_of(function)}
    working |= {
        id(info.node)
        for info in home.classes.values()
        if home.home(info.node) is home and any(id(m) in working for m in info.methods.values())
    }
    return frozenset(working)


def _leaves(node: ast.AST, in_loop: bool) -> bool:
    """`LoopModel.may_leave_iteration` of `node`, inside a loop of its own or not (a function
    of the module, not a nested one: one that calls itself is a reference cycle, garbage
    for the cyclic collector after every call)."""
    if isinstance(node, ast.Continue | ast.Break):
        return not in_loop
    if isinstance(node, ast.Return | ast.Raise):
        return True
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
        return False
    inner = in_loop or isinstance(node, ast.For | ast.AsyncFor | ast.While)
    return any(_leaves(child, inner) for child in child_nodes(node))


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _parameters(function) -> list[ast.arg]:
    arguments = function.args
    return arguments.posonlyargs + arguments.args + arguments.kwonlyargs


def _parameter_value(argument: ast.arg):
    """A parameter of a function analysed on its own: whatever the caller passes."""
    annotation = ast.unparse(argument.annotation) if argument.annotation is not None else ""
    if annotation.endswith("Module"):
        return EMPTY.with_shape(shapes.module("custom"))
    return OPAQUE


# what a function that hands its argument back detached says (`h.detach()`, `h.data`)
DETACHING_WORDS = frozenset({"detach", "detach_", "data"})


def _returns_detached(function, symbols: Symbols) -> bool:
    """Run the function on a graph-carrying argument and see whether the graph survives;
    only a function that detaches something (`h.detach()`, `h.data`) is tried: one that
    returns a number made from its argument (`count_params(model)`) also leaves no graph."""
    from loopfix.model.graphs import Graph, Value

    params = _parameters(function)
    if len(params) != 1 or function.args.vararg or function.args.kwarg:
        return False
    if not any(
        isinstance(node, ast.Attribute) and node.attr in DETACHING_WORDS for node in walk(function)
    ):
        return False
    observations = Observations()
    interpreter = Interpreter(symbols, observations)
    carried = Value(frozenset({Graph(site=(-1,))}), shapes.UNKNOWN)
    env = {params[0].arg: carried}
    flow = interpreter.exec_block(function.body, env)
    returned = flow.returned
    return returned is not None and not returned.graphs and flow.normal is None


def _names_used(node: ast.AST) -> frozenset[str]:
    return frozenset(n.id for n in walk(node) if isinstance(n, ast.Name))


_SCHEDULE_OPERATORS = (ast.Mod, ast.FloorDiv, ast.BitAnd)


def _is_schedule(test: ast.expr, counts: set[str], reset: set[str]) -> bool:
    """`counts_iterations` for one expression (a test, or a value a name is bound to);
    `reset`: the counts the loop sets back to a constant."""
    if not isinstance(test, ast.Compare | ast.BoolOp | ast.UnaryOp | ast.BinOp | ast.Call):
        return False
    for node in walk(test):
        cycle = isinstance(node, ast.BinOp) and isinstance(node.op, _SCHEDULE_OPERATORS)
        if cycle and any(isinstance(n, ast.Name | ast.Attribute) for n in walk(node.left)):
            return True
        if isinstance(node, ast.Compare):
            if _reads_any(node, reset):
                return True
            if isinstance(node.ops[0], ast.In) and _reads_any(node.left, counts):
                return True
        if isinstance(node, ast.Call) and any(
            _reads_any(argument, counts) for argument in node.args
        ):
            return True
    return False


def _skips_every_kth(test: ast.expr) -> bool:
    """`i % k != k - 1` or a bare remainder (`if i % k:`): true in all but one iteration in
    k; so are the other ways of writing it, or a share of the iterations that is not one in
    k: a remainder compared other than by `==` (`i % k < k - 1`, `(i + 1) % k > 0`) or tested
    for membership (`i % k in (0, 1)`), and a negated test (`not (i % k == k - 1)`), but not
    a negated bare remainder (`not i % k`: the first of every k)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = test.operand
        return not (isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Mod))
    if isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod):
        return True
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and not isinstance(test.ops[0], ast.Eq)
        and any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mod) for n in walk(test))
    )


def _bound_once(test: ast.expr, loop: ast.AST) -> ast.expr | None:
    """The value `loop` binds the name `test` to, where it binds it exactly once."""
    if not isinstance(test, ast.Name):
        return None
    values = [
        node.value
        for node in walk(loop)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == test.id for t in node.targets)
    ]
    return values[0] if len(values) == 1 else None


def _picks_by_count(value: ast.expr) -> bool:
    """A value a schedule function returns: a remainder, floor division or bit mask, or a
    membership test (`step in update_steps`); not a threshold (`i >= warm_up`)."""
    return any(
        (isinstance(n, ast.BinOp) and isinstance(n.op, _SCHEDULE_OPERATORS))
        or (isinstance(n, ast.Compare) and isinstance(n.ops[0], ast.In))
        for n in walk(value)
    )


def _iteration_counts(loop: ast.AST) -> set[str]:
    """The names (and attribute paths) `loop` counts its iterations with: those its target
    binds, those it adds to (`step += 1`, `step = step + 1`), and those it computes from a
    count (`global_step = epoch * steps + i`)."""
    counts = set()
    if isinstance(loop, ast.For | ast.AsyncFor):
        counts |= {n.id for n in walk(_counter_target(loop)) if isinstance(n, ast.Name)}
    assignments = []
    for node in walk(loop):
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            path = dotted_name(node.target)
            if path is not None:
                counts.add(path)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.BinOp):
            for target in node.targets:
                path = dotted_name(target)
                if path is not None:
                    assignments.append((path, node.value))
    for path, value in assignments:  # `step = step + 1`
        added_to = {dotted_name(value.left), dotted_name(value.right)}
        if isinstance(value.op, ast.Add) and path in added_to:
            counts.add(path)
    grown = True
    while grown:  # `global_step = epoch * len(loader) + i + 1`
        grown = False
        for path, value in assignments:
            if path not in counts and _reads_any(value, counts):
                counts.add(path)
                grown = True
    return counts


PROGRESS_BARS = frozenset({"tqdm", "tqdm.tqdm", "tqdm.auto.tqdm"})
COUNTING_ITERABLES = frozenset({"range", "trange", "tqdm.trange", "itertools.count", "count"})


def _called(node: ast.expr) -> str | None:
    return dotted_name(node.func) if isinstance(node, ast.Call) else None


def _counter_target(loop: ast.For | ast.AsyncFor) -> ast.AST:
    """The part of a `for` loop's target that counts its iterations: all of it over
    `range(...)` (also inside a progress bar, `tqdm(range(n))`), the index of `enumerate(...)`
    (`batch_idx` of `for batch_idx, (data, target) in enumerate(loader)`, not the batch);
    nothing of a loop over a data loader's items (`for x, y in loader`: `x` and `y` are
    data, and a loss computed from them is no schedule)."""
    target, iterable = loop.target, loop.iter
    while _called(iterable) in PROGRESS_BARS and iterable.args:  # `tqdm(range(n))`
        iterable = iterable.args[0]
    called = _called(iterable)
    if called == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
        return target.elts[0]
    if called in COUNTING_ITERABLES:
        return target
    return ast.Tuple(elts=[], ctx=ast.Load())  # `for x, y in loader`: data


def _reset_in(loop: ast.AST) -> set[str]:
    """The names and attribute paths `loop` binds to a constant (`micro = 0`)."""
    return {
        path
        for node in walk(loop)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if (path := dotted_name(target)) is not None
    }


def _reads_any(node: ast.AST, paths: set[str]) -> bool:
    return any(
        isinstance(n, ast.Name | ast.Attribute) and dotted_name(n) in paths for n in walk(node)
    )


def _inside(node: ast.AST, container: ast.AST) -> bool:
    return any(node is n for n in walk(container))


def _stores_into(node: ast.AST, roots: set[str]) -> bool:
    if isinstance(node, ast.Name | ast.Attribute | ast.Subscript) and isinstance(
        node.ctx, ast.Store | ast.Del
    ):
        return root_name(node) in roots
    return False


# builtins that never change their arguments
PURE_BUILTINS = frozenset(
    {
        "print",
        "len",
        "str",
        "int",
        "float",
        "bool",
        "repr",
        "format",
        "abs",
        "min",
        "max",
        "round",
        "sum",
        "isinstance",
        "range",
        "enumerate",
        "zip",
        "sorted",
    }
)


def _hands_to_call(node: ast.AST, roots: set[str]) -> bool:
    """A call that may change an object a root names: a method of it, or a function it is
    passed to (ints are not objects a call can change: loop counters are left out by the
    caller; builtins that only read are left out here)."""
    if not isinstance(node, ast.Call):
        return False
    if isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS:
        return False
    receiver = node.func.value if isinstance(node.func, ast.Attribute) else None
    arguments = [*node.args, *(k.value for k in node.keywords)]
    candidates = [receiver, *arguments] if receiver is not None else arguments
    return any(c is not None and root_name(c) in roots for c in candidates)


IN_PLACE_SAFE = {"requires_grad_", "zero_", "detach_", "retain_grad", "share_memory_"}


# what a running count adds (`index += 1`, `total += loss.item()`, `seen += x.size(0)`)
COUNT_CALLS = frozenset({"item", "len", "size", "numel", "float", "int"})


def _in_place(node: ast.AST) -> bool:
    if isinstance(node, ast.AugAssign):
        return not _counts(node)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr.endswith("_")
        and not node.func.attr.startswith("_")
        and node.func.attr not in IN_PLACE_SAFE
    )


def _counts(node: ast.AugAssign) -> bool:
    """`index += 1`, `total += loss.item()`: a Python number kept by a name, not a tensor
    changed in place."""
    if not isinstance(node.target, ast.Name):
        return False
    value = node.value
    if isinstance(value, ast.Constant):
        return isinstance(value.value, int | float) and not isinstance(value.value, bool)
    calls = [n.func for n in walk(value) if isinstance(n, ast.Call)]
    names = {f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "") for f in calls}
    return isinstance(value, ast.Call) and bool(names & COUNT_CALLS)


def _unequal(test: ast.expr, a: str, b: str) -> bool:
    """`a != b` (either way round), alone or among the terms of an `and`."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_unequal(value, a, b) for value in test.values)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    if not isinstance(test.ops[0], ast.NotEq | ast.IsNot):
        return False
    sides = {ast.unparse(test.left), ast.unparse(test.comparators[0])}
    return sides == {a, b}


LOGGING_CALLS = frozenset(
    {
        "print", "float", "int", "round", "str", "format", "len", "repr",
        "info", "debug", "warning", "log", "add_scalar", "add_scalars", "set_postfix",
        "set_description", "write", "append_row", "mean", "item", "tolist", "numpy",
    }
)  # fmt: skip
# methods whose result holds no graph: what they are called on is only read as numbers
NUMBER_METHODS = frozenset({"item", "tolist", "numpy", "detach"})
# reductions and conversions of a tensor, or of a list of them, whose result keeps the graph:
# what uses the result decides (`torch.stack(losses).mean().backward()` does not only log)
ITEM_VIEWS = frozenset({"items", "values"})  # a dict's views a loop binds items of
REDUCING_METHODS = frozenset({"mean", "sum", "cpu", "float", "double", "squeeze", "flatten"})
REDUCING_FUNCTIONS = frozenset(
    {"sum", "torch.stack", "torch.cat", "torch.concat", "torch.mean", "torch.sum"}
)


def _instance_attribute(var: str) -> bool:
    """`self.running_loss`: a total kept on the instance (one attribute of `self`)."""
    root, _, rest = var.partition(".")
    return root == "self" and rest.isidentifier()


def _reads(node: ast.AST, var: str, attribute: str | None) -> bool:
    """Whether `node` reads the total `var`: the name, or for a total kept on the instance
    (`attribute`) an attribute of that name on any object."""
    if attribute is not None:
        return (
            isinstance(node, ast.Attribute)
            and node.attr == attribute
            and isinstance(node.ctx, ast.Load)
        )
    return isinstance(node, ast.Name) and node.id == var and isinstance(node.ctx, ast.Load)


def _logged(node: ast.AST, parents: dict[int, ast.AST], qualify) -> bool | str:
    """How `node`'s value is used: True when it only feeds a logging call, a formatted string
    or a plain number; the name it is assigned to (as it is, or reduced: `avg =
    torch.stack(losses).mean()`), or the name a loop over it binds to each item (`for loss in
    losses:`, the value of `for name, total in totals.items():`), whose reads decide; else
    False."""
    current, view = node, None
    while id(current) in parents:
        parent = parents[id(current)]
        if isinstance(parent, ast.FormattedValue | ast.JoinedStr):
            return True
        if isinstance(parent, ast.For | ast.comprehension) and parent.iter is current:
            return _item_name(parent.target, view)
        if isinstance(parent, ast.Attribute) and not isinstance(parent.ctx, ast.Load):
            return True  # `meter.count = 0`: a store into the object hands nothing on
        if isinstance(parent, ast.Attribute):
            call = parents.get(id(parent))
            if not (isinstance(call, ast.Call) and call.func is parent):
                current = parent  # an attribute read (`meter.avg`, `total.data`)
                continue
            if parent.attr in NUMBER_METHODS:
                return True
            if parent.attr in ITEM_VIEWS and not call.args and view is None:
                view, current = parent.attr, call  # `totals.items()`: what the loop binds
                continue
            if parent.attr not in REDUCING_METHODS:
                return False  # `total.backward()`, a method loopfix does not know
            current = call
            continue
        if isinstance(parent, ast.Call):
            if current is parent.func:
                return False
            qualified = qualify(parent.func) or ast.unparse(parent.func)
            if qualified in REDUCING_FUNCTIONS and parent.args and parent.args[0] is current:
                current = parent
                continue
            if qualified.startswith("math."):
                return True  # `math.exp(cur_loss)`: a Python float of it (`Tensor.__float__`)
            return qualified.rpartition(".")[2] in LOGGING_CALLS  # else handed to a call
        if isinstance(parent, ast.Assign):
            (target,) = parent.targets if len(parent.targets) == 1 else (None,)
            return target.id if isinstance(target, ast.Name) and parent.value is current else False
        if isinstance(parent, ast.Tuple):  # `'[%d] loss: %.3f' % (i, total_loss / 2)`
            formatting = parents.get(id(parent))
            if not (
                isinstance(formatting, ast.BinOp)
                and isinstance(formatting.op, ast.Mod)
                and isinstance(formatting.left, ast.Constant)
                and isinstance(formatting.left.value, str)
            ):
                return False
        elif not isinstance(parent, ast.BinOp | ast.UnaryOp | ast.Subscript | ast.Compare):
            return False
        current = parent
    return False


def _item_name(target: ast.expr, view: str | None) -> str | bool:
    """The name a loop's `target` binds each item's value to: the whole target of a loop over
    the total or its `.values()`, the second of `for key, value in total.items()`; False for
    any other target (nothing to follow)."""
    if view == "items":
        pair = target.elts if isinstance(target, ast.Tuple) and len(target.elts) == 2 else ()
        target = pair[1] if pair else None
    return target.id if isinstance(target, ast.Name) else False


def _holds(root: ast.AST, node: ast.AST) -> bool:
    return any(n is node for n in walk(root))


MODEL_COLLECTIONS = ("seq", "vtuple", "modules", "tuple", "dict")
DICT_VIEWS = ("values", "items", "keys")


def _walked_collections(iterable: ast.expr) -> list[ast.expr]:
    """The collections a loop's iterable walks: `xs` in `xs`, `range(len(xs))`,
    `enumerate(xs)`, `xs.values()`, `xs.items()`, and each of `zip(xs, ys)`; empty for
    anything else."""
    if not isinstance(iterable, ast.Call):
        return [iterable] if isinstance(iterable, ast.Name | ast.Attribute) else []
    function, arguments = dotted_name(iterable.func), iterable.args
    if isinstance(iterable.func, ast.Attribute) and iterable.func.attr in DICT_VIEWS:
        return [] if arguments else _walked_collections(iterable.func.value)
    if function == "range" and len(arguments) == 1:
        inner = arguments[0]
        if isinstance(inner, ast.Call) and dotted_name(inner.func) == "len" and inner.args:
            return _walked_collections(inner.args[0])
        return []
    if function == "enumerate" and arguments:
        return _walked_collections(arguments[0])
    if function == "zip" and arguments and not iterable.keywords:
        parts = [_walked_collections(a) for a in arguments]
        return [] if not all(parts) else [c for part in parts for c in part]
    return []
