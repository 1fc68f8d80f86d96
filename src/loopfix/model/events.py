"""Autograd and optimizer events: backward passes consume graph, optimizer steps make the graph
of their modules stale, `no_grad` regions build none."""

from __future__ import annotations

import ast

from loopfix.model import shapes
from loopfix.model.calls import (
    NO_GRAD_CONTEXTS,
    SET_GRAD_ENABLED,
    _is_scheduler,
    is_no_grad_alias,
    retain_keyword,
)
from loopfix.model.frames import Effect
from loopfix.model.graphs import (
    EMPTY,
    PEERS,
    BackwardSite,
    CarriedGraph,
    Env,
    Graph,
    UpdateSite,
    Value,
    is_entry,
)
from loopfix.model.symbols import dotted_name


class EventsMixin:
    """Backward, step and zero_grad, for `Interpreter`."""

    def backward(
        self, node: ast.Call, loss: Value, retain: bool | None, env: Env, spares=None
    ) -> None:
        """A backward pass through `loss`'s graphs; `spares`: a test of the graphs it does not
        free (a backward restricted with `inputs=` to other modules' parameters), which it
        still counts as reached (precision first: a retain it may need is kept)."""
        self.env_events += 1
        backward_id = self._id("backward", node)
        if self.listed_runs:
            self.obs.listed_backwards.add(backward_id)
        loops = tuple(self.loop_stack)
        site = self.obs.backwards.get(backward_id)
        if site is None:
            site = self.obs.backwards[backward_id] = BackwardSite(
                id=backward_id,
                call=node,
                statement=None,
                retain=retain,
                retain_keyword=retain_keyword(node),
                loops=loops,
            )
        if site.statement is None and self.frame.is_top:
            # first met through a call from elsewhere: its own scope is where fixes go
            site.statement, site.loops = self.top_statement, loops
        known = [g for g in loss.graphs if not g.opaque]
        if not known or len(known) < len(loss.graphs) or any(map(self._element_graph, known)):
            # of unknown origin, or built by elements of a container of modules, which the
            # model does not tell apart (`outputs[i]` and `outputs[j]` are one abstract graph)
            self.obs.partly_unknown.add(backward_id)
        # a graph consumed in an earlier iteration and carried into this one: freed ("second
        # time"), or kept by retain_graph=True and changed since by a step (the version error);
        # a kept graph no step has changed is backpropagated again, by design (K-step TBPTT)
        failing = {
            g
            for g in known
            if g.consumed_by is not None
            and g.crossed is not None
            and g.crossed in loops
            and (not g.retained or g.stale_by is not None)
        }
        for graph in failing:
            if graph.crossed not in self.top_loops:
                continue  # a callee's loop seen from a caller: its own scope reports it
            record = self.obs.carried.setdefault(
                (graph.crossed, graph.via), CarriedGraph(graph.crossed, graph.via)
            )
            record.consumers |= graph.consumers
            record.failing.add(backward_id)
            record.retained |= graph.retained
        signature = frozenset(g.route for g in known if g not in failing)
        self.obs.signatures[backward_id] = (
            self.obs.signatures.get(backward_id, frozenset()) | signature
        )
        reached = {c for g in loss.graphs for c in g.consumers}
        self.obs.reached_consumers.setdefault(backward_id, set()).update(reached)
        this_iteration = [g for g in known if g not in failing]
        items = self.obs.backward_items.setdefault(backward_id, {})
        for graph in known:
            items.setdefault(graph.site, set()).add(graph.item)
        freed = {
            g.freed_by
            for g in this_iteration
            if g.freed_by is not None and not self._through_another_item(g)
        }
        # an entry of a dict whose entries are not told apart may not hold the graph the
        # step made stale at all (`keyed_graph`): it proves no version error
        stale = {g.stale_by for g in this_iteration if g.stale_by is not None and not is_entry(g)}
        modules = set().union(*(self.obs.site_modules.get(g.site, {None}) for g in known))
        self.obs.backward_modules.setdefault(backward_id, set()).update(modules)
        if freed:
            self.obs.freed_reaches.setdefault(backward_id, set()).update(freed)
        if stale:
            self.obs.stale_reaches.setdefault(backward_id, set()).update(stale)
        self._note_within(("backward", backward_id, None))
        if (freed or stale) and not self.frame.is_top and self.top_statement is not None:
            anchors = self.obs.reach_anchors.setdefault(backward_id, [])
            if self.top_statement not in anchors:
                anchors.append(self.top_statement)
        keys = {g.key for g in loss.graphs if spares is None or not spares(g)}
        retained = retain is not False
        lists = self.per_element_lists(env)
        # a graph built per iteration of an earlier loop (carried over its back-edge) and
        # reached through an element of a container this loop walks: each iteration takes
        # another element (`for r, prob in self.data[::-1]: (-log(prob) * r).backward()`), so
        # the container keeps the other elements' graphs; what every element shares is not
        # spared (its piece was built outside that loop, or in a loop around this backward)
        walked = set().union(*self.iterated_containers) if self.iterated_containers else set()
        per_element = {
            g.key
            for g in known
            if g.crossed is not None
            and g.crossed not in loops
            and g not in failing
            and g.key not in self.obs.chained.get(g.crossed, ())
        }
        consumed = _Once(lambda g: self._consumed(g, backward_id, retained))
        for name, value in list(env.items()):
            # a list of per-element results (`outputs = [m(x) for m in models]`) keeps the
            # other elements' graphs: this backward went through one element's; the later
            # iterations' reads of other elements (peers) see what it consumed
            spared = (
                {g.key for g in value.graphs if self._element_graph(g)} if name in lists else ()
            )
            if spared and spared & keys:
                peers = env.get(name + PEERS, value)
                env[name + PEERS] = peers.map_graphs(lambda g: consumed(g) if g.key in keys else g)
                self.peer_index[name] = self.element_indices[-1] if self.element_indices else None
            eaten = keys - spared if spared else keys
            if name in walked:
                eaten = eaten - per_element
            if any(g.key in eaten and backward_id not in g.consumers for g in value.graphs):
                env[name] = value.map_graphs(lambda g, e=eaten: consumed(g) if g.key in e else g)

    def _consumed(self, graph: Graph, backward_id: int, retained: bool) -> Graph:
        """`graph` once the backward `backward_id` went through it; a module's parameter
        handed back as it is (`leaf_sites`) keeps nothing to free."""
        return graph.consume(backward_id, retained or graph.site in self.obs.leaf_sites)

    def _update(self, node: ast.Call, func: ast.Attribute, env: Env) -> Value | None:
        """`opt.step()`, `scaler.step(opt)`, `opt.zero_grad()`, `model.zero_grad()`."""
        receiver = self.eval(func.value, env)
        # an object that may be None (`optimizer = None` unless a setting builds one) is not
        # None where a method of it runs: the path with None raises there
        shape, target = shapes.present(receiver.shape), func.value
        if func.attr == "step" and shape == ("scaler",) and node.args:
            target = node.args[0]
            shape = shapes.present(self.eval(target, env).shape)
        positional, _ = self._args(node, env)
        if isinstance(shape, tuple) and shape[0] == "optimizer":
            modules = shape[1]
        elif func.attr == "zero_grad" and shapes.is_module(shape):
            path = self.module_path(target)
            modules = frozenset({path}) if path else None
        else:
            if _is_scheduler(shape) and func.attr == "step":
                self._note_scheduler_step(node, shape[1])
            return EMPTY if shape in (("scaler",),) or _is_scheduler(shape) else None
        update_id = self._id("update", node)
        update = self.obs.updates.get(update_id)
        if update is None:
            update = self.obs.updates[update_id] = UpdateSite(
                id=update_id,
                kind=func.attr,
                call=node,
                statement=None,
                target=self.module_path(target),
                modules=modules,
                loops=tuple(self.loop_stack),
            )
        if update.statement is None and self.frame.is_top:
            update.statement, update.loops = self.top_statement, tuple(self.loop_stack)
            update.target, update.modules = self.module_path(target), modules
        if func.attr == "step" and modules:
            stepped = modules | self._held_paths(modules, env)
            self._go_stale(update_id, stepped, env, self._other_elements(modules, env))
        self._note_within(("update", update_id, modules))
        called = not self.frame.is_top and self.top_statement is not None
        if called and self.runs_on_every_call(node):
            self.obs.every_call.add((id(self.top_statement), update_id))
        if func.attr == "step" and not self.frame.is_top and self.top_statement is not None:
            path, known_as = self.module_path(target), self._kept_module(target)
            known_as = known_as if known_as != path else None
            self.note_effect(Effect("step", self.top_statement, node, path, known_as=known_as))
        return EMPTY

    def _held_paths(self, modules: frozenset[str], env: Env) -> frozenset[str]:
        """The names the scope's builder gave the networks an object keeps, for an optimizer
        over them (`tr.G`, the `self.G` of `GANTrainer(G, D)`, is `G`): a step of it makes
        stale what `G(z)` built in the scope (`HeldModules.module_of`)."""
        if not self.held.given:
            return frozenset()
        seen, found = self._modules_seen(), set()
        for path in modules:
            owner, _, attribute = path.rpartition(".")
            info = self.class_of(env[owner].shape) if owner in env else None
            if info is not None:
                key = self.held.module_of(info, attribute, self.instances.symbols, seen)
                found |= {key} if key is not None else set()
        return frozenset(found)

    def _note_scheduler_step(self, node: ast.Call, optimizer: str | None) -> None:
        """`scheduler.step()` in the scope being run, or in a function it calls that steps
        it on every call (`trainer.update_learning_rate()`): the caller's statement does."""
        given = bool(node.args or node.keywords)
        if self.frame.is_top:
            self.obs.scheduler_steps.append((node, self.top_statement, optimizer, given))
        elif self.top_statement is not None and self.runs_on_every_call(node):
            self.note_effect(Effect("schedule", self.top_statement, node, optimizer, given))

    def _note_within(self, event: tuple) -> None:
        """An event met inside a call: remember it on the calling scope's statement."""
        if self.frame.is_top or self.top_statement is None:
            return
        events = self.obs.events_within.setdefault(id(self.top_statement), [])
        if event not in events:
            events.append(event)

    def _other_elements(self, modules: frozenset[str], env: Env) -> set[str]:
        """`for opt, loss in zip(opts, losses): ... opt.step()` or `optimizers[i].step()`,
        each optimizer over one element of a container of modules: the step changes that
        element only, so lists of per-element results keep the other elements fresh."""
        if not all("[*]" in m for m in modules):
            return set()
        return self.per_element_lists(env)

    def _through_another_item(self, graph) -> bool:
        """The backward that freed `graph` reached the unseen module's output only through
        other items than the one `graph` came through (`graphs.item_graph`): they may share
        nothing it saved, so this one is not proven to go through a freed graph."""
        if graph.item is None:
            return False
        items = self.obs.backward_items.get(graph.freed_by, {}).get(graph.site)
        return bool(items) and None not in items and graph.item not in items

    def _element_graph(self, graph) -> bool:
        """Graph built by one element of a container of modules (`heads[*]`)."""
        paths = self.obs.site_modules.get(graph.site, ())
        return bool(paths) and all(p is not None and "[*]" in p for p in paths)

    def _go_stale(
        self, step_id: int, modules: frozenset[str], env: Env, spared: set[str] = frozenset()
    ) -> None:
        """The step changed these modules' weights in place: graphs that saved them are stale
        (except in `spared`, containers whose other elements it did not touch)."""
        self.env_events += 1
        stale = _Once(lambda g: g.go_stale(step_id))
        for name, value in list(env.items()):
            if name in spared:
                # the other elements' readers see the stepped element among them
                peers = env.get(name + PEERS, value)
                if any(self._owned(g.site, modules) for g in peers.graphs):
                    env[name + PEERS] = peers.map_graphs(
                        lambda g: stale(g) if self._owned(g.site, modules) else g
                    )
                    index = self.element_indices[-1] if self.element_indices else None
                    self.peer_index[name] = index
                continue
            if any(self._owned(g.site, modules) and g.stale_by is None for g in value.graphs):
                env[name] = value.map_graphs(
                    lambda g: stale(g) if self._owned(g.site, modules) else g
                )

    def _owned(self, site: tuple[int, ...], modules: frozenset[str]) -> bool:
        """Whether the graph piece at `site` saved weights of `modules` (a module's call
        does; the use of a hand-made weight, `leaf_graphs`, is not known to)."""
        if site in self.obs.leaf_sites:
            return False
        return any(
            path is not None
            and path[:1] != shapes.TENSOR_PATH
            and any(shapes.within(path, m) for m in modules)
            for path in self.obs.site_modules.get(site, ())
        )

    def _is_no_grad_context(self, node: ast.expr) -> bool:
        func = node.func if isinstance(node, ast.Call) else node
        if self.symbols.qualify(func) in NO_GRAD_CONTEXTS or self.grad_mode_set(node) is False:
            return True
        return is_no_grad_alias(node, self.symbols)  # `with no_grad():`, `with evaluation:`

    def may_switch_grad(self, node: ast.expr) -> bool:
        """A `with` context that may turn grad off where the model cannot tell: a project
        function or method's (`with evaluating(model):`, a `@contextmanager` that enters
        `torch.no_grad()`), one held in a name or attribute (`with ctx:`), an `ExitStack`, or
        `torch.set_grad_enabled` given a variable (`set_grad_enabled(training)`)."""
        if isinstance(node, ast.Name | ast.Attribute):
            return True
        if not isinstance(node, ast.Call):
            return False
        qualified = self.symbols.qualify(node.func) or ""
        if qualified in SET_GRAD_ENABLED:
            return self.grad_mode_set(node) is None
        if qualified == "contextlib.ExitStack":
            return True
        name = dotted_name(node.func) or ""
        if "." not in name:
            return name in self.symbols.functions or name in self.symbols.classes
        return self.symbols.member(node.func) is not None or name.startswith("self.")

    def grad_mode_set(self, node: ast.expr) -> bool | None:
        """The mode `torch.set_grad_enabled(False)` (or `True`, also as `mode=`) sets, as a
        context or a statement; None for another call, or a mode not written as a constant."""
        if (
            not isinstance(node, ast.Call)
            or self.symbols.qualify(node.func) not in SET_GRAD_ENABLED
        ):
            return None
        given = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "mode")]
        mode = given[0] if given else None
        return mode.value if isinstance(mode, ast.Constant) and type(mode.value) is bool else None


class _Once:
    """`change(graph)` computed once per graph object in one event (a backward, a step):
    the values of an environment share their graphs, and keep sharing the changed ones
    (else each value gets its own copy, and every later event changes each copy again)."""

    def __init__(self, change) -> None:
        self.change = change
        self.done: dict[int, tuple[Graph, Graph]] = {}  # id -> (the graph, what it became)

    def __call__(self, graph: Graph) -> Graph:
        found = self.done.get(id(graph))
        if found is None or found[0] is not graph:  # kept alive here: no id is reused
            found = self.done[id(graph)] = (graph, self.change(graph))
        return found[1]
