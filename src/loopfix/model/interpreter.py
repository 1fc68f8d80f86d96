"""An abstract interpreter that follows autograd graphs through one scope's statements.

It runs each statement over abstract values (`graphs.Value`): module calls build graph, most
operations pass graph on, `.detach()` and friends drop it, backward calls consume it, and each
loop is run to a fixpoint with graphs relabelled as they cross the loop's back-edge. Calls to
functions and `nn.Module` classes defined in the same file are followed into their bodies.

The interpreter only records observations (`Observations`); rules turn them into findings.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import dataclasses

from loopfix.model import shapes
from loopfix.model.bindings import parameter_names
from loopfix.model.calls import (
    CallsMixin,
    closure_work,
    concatenated_positions,
    no_grad_decorator,
)
from loopfix.model.conditions import (
    ListedValues,
    invariant_splits,
    iteration_splits,
    tested_constants,
    unnegated,
)
from loopfix.model.counters import Counter, Phase, loop_counter, names_assigned_in
from loopfix.model.events import EventsMixin
from loopfix.model.expressions import ExpressionsMixin
from loopfix.model.frames import Call, Effect, Frame, Observations
from loopfix.model.graphs import (
    EMPTY,
    PEERS,
    Env,
    Flow,
    Graph,
    Value,
    join_envs,
    union,
)
from loopfix.model.holders import HeldModules
from loopfix.model.index import child_nodes, keep, kept_fact, syntax_key, walk
from loopfix.model.instances import CallSites, Instances, identifies
from loopfix.model.memo import LoopMemo
from loopfix.model.shapes import NONE, TENSOR, UNKNOWN
from loopfix.model.slots import ItemSlots
from loopfix.model.summaries import Summaries
from loopfix.model.symbols import (
    NOT_CONSTANT,
    PARAMETER_CLASSES,
    ClassInfo,
    FunctionNode,
    Symbols,
    dotted_name,
    literal_value,
    mangled_name,
)

MAX_LOOP_ROUNDS = 12


class BudgetSpent(Exception):
    """The interpreter ran the statements it was allowed (`Interpreter.budget`)."""


# calls that hand on the items of the list they are given, in some order
KEEP_ITEMS = ("reversed", "list", "tuple", "sorted")


# the methods a loop calls on `self` that `invariant_splits` reads as part of it, at most
MAX_INLINED_METHODS = 32


# a `for` over a literal list of up to this many names runs once per item (`_run_unrolled`)
MAX_UNROLLED = 8


class Interpreter(ExpressionsMixin, CallsMixin, EventsMixin):
    """The statements, the environment and the loop fixpoint; expressions, calls and
    autograd events come from the mixins."""

    def __init__(
        self,
        symbols: Symbols,
        observations: Observations,
        instances: Instances | None = None,
        kept: dict | None = None,
    ) -> None:
        self.symbols = symbols
        self.kept = kept  # facts of loops kept across the analyses of one document
        self.obs = observations
        self.instances = instances or Instances(symbols, CallSites())
        self.call_sites = self.instances.call_sites
        self._ids: dict[tuple[str, int], int] = {}
        self._seen_modules: dict[tuple[int, int], tuple] = {}  # `_modules_seen`'s answers
        self._chains: dict[int, int] = {}  # first statement id -> `exclusive_ifs`
        self.scope_number = 0  # scopes run so far (`run_scope`)
        # (scope, site, modules site, function id) -> the calls of that function made there,
        # in order of first evaluation (`CallsMixin._call_site`)
        self._calls_from: dict[tuple, list[int]] = {}
        self._id_counts: dict[str, int] = {}  # ids given so far, per kind
        self.frame = Frame()
        self.loop_stack: list[int] = []
        self.top_loops: set[int] = set()  # loops of the scope being run, not of callees
        self.frozen_forwards = 0  # inside the forward of a module frozen for good
        self.written_stack: list[set[str]] = []
        self.element_loops: list[bool] = []  # per enclosing loop: does it walk elements?
        # per enclosing loop: its index variable when it counts elements (`for k in range(n)`)
        self.element_indices: list[str | None] = []
        # per enclosing `for` loop: the containers it takes one element of per iteration
        self.iterated_containers: list[frozenset[str]] = []
        # lists built from named objects (`optimizers = [opt_a, opt_b]`): their items' paths
        self.listed: dict[str, tuple[str | None, ...]] = {}
        # lists of param groups (`groups = [{"params": net.parameters(), "lr": 0.1}]`): the
        # groups, for an optimizer built over the list (`Adam(groups)`)
        self.param_groups: dict[str, tuple[ast.Dict, ...]] = {}
        self.held = HeldModules()  # the modules the objects built in the scope keep
        # keys of the scope's names bound to a tensor that requires grad, made there
        # (`W = nn.Parameter(...)`, `torch.randn(..., requires_grad=True)`): `_note_leaf`
        self.leaves: set[str] = set()
        # list key -> the index variable of the loop whose backwards and steps the list's
        # peer view records (reads with that index are the iteration's own element)
        self.peer_index: dict[str, str | None] = {}
        self.iterating = False  # evaluating a loop's iterable: one element per iteration
        self.call_stack: list[FunctionNode] = []
        self.no_grad = False
        # `with` blocks around the code running whose context may switch grad off unseen
        # (`EventsMixin.may_switch_grad`): calls there are not known to run with grad
        self.grad_mode_unknown = 0
        self.top_statement: ast.stmt | None = None
        # `for h in hidden:` -> {"h": "hidden"}, so that `h.detach_()` clears `hidden`.
        self.iterated_from: dict[str, str] = {}
        # names that stand for one element of a container of modules (`for h in heads`)
        self.element_names: set[str] = set()
        self.slots = ItemSlots()  # `losses[i] = ...` read back as `losses[i]`
        # tests an enclosing loop cannot change (`conditions.unnegated` keys) -> the value the
        # loop is being run with
        self.assumed: dict[str, bool] = {}
        # how many of the split loops and scopes being run assume a setting takes one of the
        # values its tests list (`conditions.ListedValues`)
        self.listed_runs = 0
        # whether modules of the project call into this one (`loop_model.record_calls_into`)
        self.external_callers = False
        self.yielded: set = set()
        # the attributes the last followed call set on the local it returned (a factory's
        # `return model`), for the assignment of its value (`hand_back_attributes`)
        self.returned_attributes: tuple[FunctionNode, str, Env] | None = None
        # ids of the functions defined in another's body that a call ran (`Frame.nested`)
        self.closures: set[int] = set()
        self._facts: dict[tuple[int, int], tuple[Counter | None, list[str], set[str]]] = {}
        # loop id -> (the loop, the loop as its iterations walk it, the calls its iterable
        # makes that build the items, each with the name standing for it: `_walked`)
        self._walked_loops: dict[int, tuple[ast.AST, ast.AST, list]] = {}
        # loop id -> the values of those calls that are no single tensor: each iteration
        # starts from them as they were built (their items may be separate forwards, which
        # the model does not tell apart)
        self._fresh_items: dict[int, dict[str, Value]] = {}
        self.statements_run = 0  # statements interpreted, every round and call counted
        self.budget: int | None = None  # statements it may run before `BudgetSpent`
        self._indexed: dict[int, list[ast.expr]] = {}  # loop id -> `xs` read as `xs[t]`
        # counter key -> (counter, phase of the iteration being run), for the enclosing loops
        # whose body tests their counter (`if t == 0:`, `if t % k == 0:`)
        self.phases: dict[str, tuple[Counter, Phase]] = {}
        self.summaries = Summaries()  # what calls of the project's functions do, by context
        self.loop_memo = LoopMemo()  # loop runs, by context and environment at entry
        # the loop runs being remembered, each given the keys written in it, with the
        # statement that wrote them (`LoopMemo`)
        self.write_journals: list[dict[tuple[str, ast.stmt | None], None]] = []  # in order
        # the nodes given an id (`_id`), in order of first asking, while a plain call runs
        self.id_journals: list[dict[tuple[str, int], tuple[str, ast.AST]]] = []
        # the calls ranked at each place (`_call_site`), in order of first asking, likewise
        self.rank_journals: list[dict[tuple[tuple, int], None]] = []
        # backwards and steps run so far: each may change any value of the environment
        self.env_events = 0
        self.call_nodes: list[ast.Call] = []  # the calls being evaluated, innermost last
        # the functions being followed from the scope being run, each with the call that
        # entered it (outermost first): what a callee does is the caller's statement's effect
        self.followed: list[tuple[FunctionNode, ast.Call | None, Call]] = []

    # ---------------------------------------------------------------- entry points
    def run_scope(
        self, body: list[ast.stmt], frame: Frame, env: Env, function: FunctionNode | None = None
    ) -> Env:
        """Run a scope's `body` (the module's, or `function`'s as its own scope). A function
        is one iteration of its callers' loops: a test it repeats, in its body or in the
        methods it calls on `self`, that nothing there can change (`conditions`) is run once
        per value of it, as a loop's is (`stmt_For`), and the flows are joined."""
        self.frame = frame
        self.scope_number += 1
        self.loop_memo.start(self.obs)  # a run is reused within its scope's run only
        self.top_loops = set()
        module_body = self.symbols.tree.body if self.symbols.tree is not None else None
        self.held = HeldModules(body, body is module_body)
        self.leaves = set()
        dimensions = self._scope_splits(function, env) if function is not None else []
        splits = self._split_runs(dimensions) if function is not None else [{}]
        # what callers in other modules pass in (their later backwards are not seen here)
        given = (
            self._given_graphs(function, env)
            if function is not None and self.external_callers
            else frozenset()
        )
        self.yielded = set()  # the keys of the graphs the scope yields (`expr_Yield`)
        flow = None
        with self._listing(dimensions):
            for assumed in splits:
                with self._assuming(assumed):
                    run = self.exec_block(body, dict(env) if len(splits) > 1 else env)
                flow = run if flow is None else flow.join(run)
        # A retained graph still held by what the scope returns or keeps on `self` may be
        # backwarded by code loopfix does not see; so may one callers in other modules passed
        # in (VQGAN's `calculate_lambda(perceptual_loss, gan_loss)`, whose trainer
        # backpropagates both losses after it took their gradients with `retain_graph=True`;
        # this file's own calls run the body where they are, and show what follows)
        kept = [flow.returned.graphs] if flow.returned is not None else []
        for final in (flow.normal, flow.returns):
            for key, value in (final or {}).items():
                if key.startswith("self."):
                    kept.append(value.graphs)
                elif given or self.yielded:
                    shared = given | self.yielded
                    kept.append(frozenset(g for g in value.graphs if g.key in shared))
        for graphs in kept:
            self.obs.escaping |= {c for g in graphs if g.retained for c in g.consumers}
        return join_envs(flow.normal, flow.returns) or {}

    def _given_graphs(self, function: FunctionNode, env: Env) -> frozenset:
        """The keys of the graphs the parameters of `function` hold as its scope starts (what
        its callers pass; `self` aside)."""
        keys = set()
        for name in parameter_names(function) - {"self", "cls"}:
            value = env.get(self.key_for(ast.Name(name)) or name)
            if value is not None:
                keys |= {g.key for g in value.graphs if not g.opaque}
        return frozenset(keys)

    # ---------------------------------------------------------------- identities
    def _id(self, kind: str, node: ast.AST) -> int:
        """Ids in order of first evaluation: stable across edits that add no such nodes."""
        key = (kind, id(node))
        for journal in self.id_journals:
            journal.setdefault(key, (kind, node))
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = self._id_counts.get(kind, 0)
            self._id_counts[kind] = found + 1
        return found

    def key_for(self, node: ast.expr) -> str | None:
        if type(node) is ast.Name:  # most calls
            root, rest = node.id, ""
        else:
            dotted = dotted_name(node)
            if dotted is None:
                return None
            root, _, rest = dotted.partition(".")
        frame = self.frame
        if root == "self" and frame.self_path is not None:
            base = frame.self_path
        elif (rest or root in frame.attribute_aliases) and root in frame.aliases:
            # `model = self.model` makes `model` itself the attribute (`_alias_attribute`)
            base = frame.aliases[root]
        elif frame.locals is not None and root not in frame.locals:
            base = frame.enclosing.get(root, root) if frame.enclosing else root
        else:
            base = frame.prefix + root
        return f"{base}.{rest}" if rest else base

    def class_of(self, shape) -> ClassInfo | None:
        """The class of a module or object value: by its name where the running code is, else
        in the file being analysed (a base class's `__init__` building a subclass's instance
        runs among its own module's names, which do not know the subclass)."""
        return self.symbols.class_of(shape) or self.instances.symbols.class_of(shape)

    def home_of(self, function: FunctionNode) -> Symbols:
        """The names a function's body means: those of the module that defines it (a base
        class's `__init__` calling a subclass's `build_model` runs the subclass's own code
        among the subclass's module's names)."""
        for symbols in (self.symbols, self.instances.symbols):
            if id(function) in symbols.homes:
                return symbols.home_by_id(id(function))
        if id(function) in self.instances.own_functions():
            return self.instances.symbols
        return self.symbols

    def module_class(self, shape) -> ClassInfo | None:
        return self.symbols.module_class(shape) or self.instances.symbols.module_class(shape)

    def module_path(self, node: ast.expr) -> str | None:
        """The caller-independent path of a module or optimizer expression."""
        dotted = dotted_name(node)
        if dotted is not None and "." not in dotted and dotted in self.frame.aliases:
            return self.frame.aliases[dotted]
        return self.key_for(node)

    def note_write(self, key: str) -> None:
        for written in self.written_stack:
            written.add(key)
        for journal in self.write_journals:
            journal[key, self.top_statement] = None
        if self.top_statement is None:
            return
        for loop_id in self.loop_stack:
            statements = self.obs.writers.setdefault((loop_id, key), [])
            if self.top_statement not in statements:
                statements.append(self.top_statement)

    # ---------------------------------------------------------------- effects of calls
    def expr_Call(self, node: ast.Call, env: Env) -> Value:
        self.call_nodes.append(node)
        try:
            return super().expr_Call(node, env)
        finally:
            self.call_nodes.pop()

    def _call_function(self, call: Call, env: Env) -> Value:
        """`CallsMixin._call_function`, with the call remembered while its body runs; a
        method of an object (not a module) called by the scope being run also records
        whether it handed on any graph the object or its arguments held ("keeps")."""
        node = self.call_nodes[-1] if self.call_nodes else None
        watched = (
            self.frame.is_top
            and self.top_statement is not None
            and node is not None
            and call.receiver_key is not None
            and call.cls is not None
            and not call.cls.is_module
        )
        before = {k: v.graphs for k, v in env.items()} if watched else {}
        self.followed.append((call.function, node, call))
        try:
            result = super()._call_function(call, env)
        finally:
            self.followed.pop()
        if watched:
            owner = call.receiver_key
            held = set(union(call.argument_values()))
            held |= {g for k, graphs in before.items() if _under(k, owner) for g in graphs}
            held = {g for g in held if not g.opaque}
            handed = bool(held & result.graphs) or any(
                (value.graphs - before.get(key, frozenset())) & held
                for key, value in env.items()
                if not _under(key, owner)
            )
            self.note_effect(Effect("keeps", self.top_statement, node, owner, handed_on=handed))
        return result

    def note_effect(self, effect: Effect) -> None:
        effects = self.obs.effects.setdefault(id(effect.statement), [])
        if effect not in effects:
            effects.append(effect)

    def runs_on_every_call(self, node: ast.Call) -> bool:
        """Whether `node`, in the function being followed, runs whenever the scope being run
        calls it: each call on the way is a whole statement of its function's own body (or
        an assignment's or return's value), after no statement that may leave it."""
        if not self.followed:
            return False
        inner = [call for _, call, _ in self.followed[1:]] + [node]
        return all(
            call is not None and _opens_body(function, call)
            for (function, _, _), call in zip(self.followed, inner, strict=True)
        )

    def _note_called_accumulation(self, value: Value, container: ast.expr) -> None:
        """`self.sum += val * n` in `meter.update(loss, n)` called in a loop of the scope
        being run: the caller adds `loss` to `meter.sum` (LF006 asks about it there)."""
        loops = [loop for loop in self.loop_stack if loop in self.top_loops]
        known = {g for g in value.graphs if not g.opaque}
        if not loops or not known or self.top_statement is None or not self.followed:
            return
        _, outer, first = self.followed[0]
        if outer is None or first.receiver_key is None or first.cls is None or first.cls.is_module:
            return  # only a method of an object the caller holds (a meter), not a forward
        key = self.key_for(container)
        if key is None or "#" in key:
            return  # a total of the callee's own
        argument = self._argument_carrying(known)
        if argument is not None:
            effect = Effect(
                "accumulate", self.top_statement, outer, key, argument=argument, loop_id=loops[-1]
            )
            self.note_effect(effect)

    def _note_called_total(
        self, statement: ast.stmt, added: ast.expr, value: Value, container: ast.expr
    ) -> None:
        """`self.total += loss` in a method the scope's loop calls on its own object
        (`self.train_step(x, y)` in `train`), after a backward freed every graph `loss`
        holds (`loss.backward()` without `retain_graph=True`): the caller's loop adds to
        `self.total` each iteration, and no later backward can go through it."""
        loops = [loop for loop in self.loop_stack if loop in self.top_loops]
        if not loops or self.top_statement is None or not self.followed:
            return
        _, outer, first = self.followed[0]
        if outer is None or first.receiver_key != "self" or first.cls is None:
            return  # only a method of the scope's own object
        key = self.key_for(container)
        if key is None or "#" in key or not key.startswith("self."):
            return
        graphs = value.graphs
        if all(g.opaque for g in graphs) or any(g.freed_by is None for g in graphs):
            return  # no graph built by known code, or one no backward freed yet
        record = (self.top_statement, statement, added, key, loops[-1])
        if all(r[1] is not statement for r in self.obs.called_totals):
            self.obs.called_totals.append(record)

    def _argument_carrying(self, graphs: set) -> ast.expr | None:
        """The one argument of the call the scope being run made (the outermost one being
        followed) whose value holds some of `graphs`, else None."""
        _, node, call = self.followed[0]
        values = [value for value, _ in call.positional]
        keywords = [k for k in node.keywords if k.arg is not None]
        pairs = list(zip(node.args, values, strict=False))
        pairs += [(k.value, call.keywords[k.arg][0]) for k in keywords if k.arg in call.keywords]
        found = [a for a, v in pairs if v.graphs & graphs and not isinstance(a, ast.Starred)]
        return found[0] if len(found) == 1 else None

    # ---------------------------------------------------------------- statements
    def exec_block(self, statements: list[ast.stmt], env: Env) -> Flow:
        # a grad mode set by a statement of the block (`stmt_Expr`) is taken to end with the
        # block: past it, the mode is the one around it, as with no statement at all
        outer_no_grad = self.no_grad
        try:
            return self._exec_statements(statements, env)
        finally:
            self.no_grad = outer_no_grad

    def _exec_statements(self, statements: list[ast.stmt], env: Env) -> Flow:
        flow = Flow(normal=env)
        chain_entry, chain_first, chain_end = None, -1, -1  # see `exclusive_ifs`
        chain_taken = False  # an earlier `if` of the chain is known to be taken
        for position, statement in enumerate(statements):
            if flow.normal is None:
                break
            if position > chain_end and isinstance(statement, ast.If):
                length = self._exclusive_ifs(statements, position)
                if length:
                    chain_entry, chain_first = flow.normal, position
                    chain_end, chain_taken = position + length - 1, False
            # a later `if` of the chain runs from where the first one started: the branches
            # before it were not taken if it is
            later = chain_first < position <= chain_end
            if later and chain_taken:
                # an earlier test holds (a split run's setting, a module constant): this one
                # cannot, and the path where no branch of the chain runs is not this run's
                self.eval(statement.test, flow.normal)
                continue
            if chain_first <= position <= chain_end:
                chain_taken = self._decided_test(statement.test) is True
            start = chain_entry if later else flow.normal
            if self.frame.is_top:
                outer, self.top_statement = self.top_statement, statement
                self.obs.note_shapes(self.obs.shapes_before, statement, flow.normal)
                step = self.exec_statement(statement, start)
                self.obs.note_shapes(self.obs.shapes_after, statement, step.normal)
                self.top_statement = outer
            else:
                step = self.exec_statement(statement, start)
            if start is not flow.normal and not chain_taken:
                # the paths of the earlier branches, and of none: unless this one is known
                # to be taken, when the others are not
                step = Flow(normal=flow.normal).join(step)
            flow = flow.then(step)
        return flow

    def _exclusive_ifs(self, statements: list[ast.stmt], position: int) -> int:
        """How many statements from `position` on form a chain of exclusive tests (remembered
        per statement; 0: none). See `exclusive_ifs`."""
        key = id(statements[position])
        found = self._chains.get(key)
        if found is None:
            found = self._chains[key] = exclusive_ifs(statements, position)
        return found

    def exec_statement(self, node: ast.stmt, env: Env) -> Flow:
        if self.budget is not None and self.statements_run >= self.budget:
            raise BudgetSpent
        self.statements_run += 1
        handler = getattr(self, f"stmt_{type(node).__name__}", None)
        if handler is not None:
            return handler(node, env)
        for child in child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child, env)
        return Flow(normal=env)

    def stmt_Assign(self, node: ast.Assign, env: Env) -> Flow:
        target, source = node.targets[0], node.value
        if isinstance(source, ast.Name | ast.Attribute) and not isinstance(
            target, ast.Tuple | ast.List
        ):  # `u = t`: one list, two names (unpacking `a, b = t` is not that)
            self.forget_positions(self.key_for(source), env)
        if (
            len(node.targets) == 1
            and isinstance(target, ast.Tuple | ast.List)
            and isinstance(source, ast.Tuple | ast.List)
            and len(target.elts) == len(source.elts)
            and not any(isinstance(e, ast.Starred) for e in [*target.elts, *source.elts])
        ):  # `a, b = f(x), g(y)`: each name gets its own value
            values = [self.eval(e, env) for e in source.elts]
            for element, value, given in zip(target.elts, values, source.elts, strict=True):
                self.bind(element, value, env)
                self._alias_attribute(element, given, value, env)
            return Flow(normal=env)
        self.returned_attributes = None  # what a factory called by this value hands back
        value = self.eval(node.value, env)
        self._note_listed(node, target, source)
        if (
            len(node.targets) == 1
            and isinstance(source, ast.BinOp)
            and isinstance(source.op, ast.Add)
            and ast.unparse(source.left) == ast.unparse(target)
        ):  # `total = total + loss`
            self.note_accumulation(source.right, self.eval(source.right, env), target, node)
        handed_back = self._objects_handed_back(node, value, env)
        for target in node.targets:
            self.bind(target, value, env)
            self._alias_attribute(target, source, value, env)
            self._alias_method(target, source, env)
            self._note_leaf(target, source)
        env.update(handed_back)
        self.hand_back_attributes(node, env)
        self._unpack_listed(node, target, source)
        return Flow(normal=env)

    def _objects_handed_back(self, node: ast.Assign, value: Value, env: Env) -> Env:
        """`model, optimizer, scheduler, epoch = checkpoint.load(model, optimizer, scheduler,
        ...)`: a function the model does not follow, given a module or optimizer and binding
        what it returns in the same position to the same name, hands that object back (it
        loads a state into it, wraps it as `amp.initialize` does). So is an object of
        unknown kind among two or more handed back so from the first position on (`model`
        from a factory the model does not follow either): a recurrent step hands back its
        state after an output (`out, hidden = f(x, hidden)`). The entries of each such object
        (it, and what it holds), as they are before the assignment."""
        target, source = node.targets[0], node.value
        if len(node.targets) != 1 or not isinstance(target, ast.Tuple):
            return {}
        if not isinstance(source, ast.Call) or value.shape != UNKNOWN:
            return {}
        handed: list[tuple[int, str, Value]] = []  # (position, key, value before)
        pairs = zip(target.elts, source.args, strict=False)  # `..., epoch = load(...)`
        for position, (element, argument) in enumerate(pairs):
            if not (isinstance(element, ast.Name) and isinstance(argument, ast.Name)):
                continue
            key = self.key_for(element)
            old = env.get(key) if key is not None and element.id == argument.id else None
            if old is not None:
                handed.append((position, key, old))
        leading = 0  # how many positions from the first on hand back their name
        while leading < len(handed) and handed[leading][0] == leading:
            leading += 1
        kept: Env = {}
        for position, key, old in handed:
            known = identifies(old.shape) or shapes.is_optimizer(old.shape)
            if known or (leading >= 2 and position < leading and old.shape == UNKNOWN):
                below = (key + ".", key + "[")
                kept.update((k, v) for k, v in env.items() if k == key or k.startswith(below))
        return kept

    def _note_leaf(self, target: ast.expr, source: ast.expr) -> None:
        """`W = nn.Parameter(torch.randn(8, 8))`, `w = torch.zeros(4, requires_grad=True)`,
        `b = torch.zeros(4).requires_grad_()` in the scope being run: a weight written by
        hand, whose uses in operations that keep a tensor for its gradient start a graph
        (`leaf_graphs`). Bound again to anything else, the name is not one (`bind`)."""
        if not (isinstance(target, ast.Name) and self.frame.is_top):
            return
        if isinstance(source, ast.Call) and self._makes_leaf(source):
            key = self.key_for(target)
            if key is not None:
                self.leaves.add(key)

    def _makes_leaf(self, call: ast.Call) -> bool:
        qualified = self.symbols.qualify(call.func) or ""
        if qualified in PARAMETER_CLASSES:
            return True
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "requires_grad_":
            flag = (
                call.args[0]
                if call.args
                else next((k.value for k in call.keywords if k.arg == "requires_grad"), None)
            )
            return flag is None or (isinstance(flag, ast.Constant) and flag.value is True)
        return qualified.startswith("torch.") and any(
            k.arg == "requires_grad" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in call.keywords
        )

    def leaf_graphs(self, operands: list[ast.expr]) -> frozenset[Graph]:
        """The graph an operation that keeps a tensor for a hand-made weight's gradient
        (`x @ W`, `torch.mm(h, W)`) starts where one of `operands` names such a weight
        (`_note_leaf`): a piece of its own at that use, known by the weight's key after
        `shapes.TENSOR_PATH` (how an optimizer over `[W, U]` names it). Whether the weight
        itself is kept depends on whether the other operand requires grad, so a step over
        it makes no such piece stale (`EventsMixin._owned`). None under `no_grad`."""
        if self.no_grad:
            return frozenset()
        pieces = set()
        for operand in operands:
            key = self.key_for(operand) if isinstance(operand, ast.Name) else None
            if key is None or key not in self.leaves:
                continue
            site = (*self.frame.site_prefix, self._id("site", operand))
            path = shapes.TENSOR_PATH + key
            self.obs.site_modules.setdefault(site, set()).add(path)
            if self.top_statement is not None:
                self.obs.statement_modules.setdefault(id(self.top_statement), set()).add(path)
            pieces.add(Graph(site))
        return frozenset(pieces)

    def _alias_attribute(self, target: ast.expr, source: ast.expr, value: Value, env: Env) -> None:
        """`model = self.model`, `agent, optimizer = self.agent, self.optimizer`, `D =
        netD.module`, `D = netD`, `o = opt`: the name is that module, object or optimizer,
        so the paths of what is called through it are the source's, as the optimizer built
        over it (or a scheduler built on it) names them (`self.model`, `netD.module`,
        `opt`: `o.step()` steps `opt`): when the function binds the name only there
        (`HeldModules.bound_once`). Bound to anything else, the name is its own again
        (`bind`), and so is a name whose source is bound again in the function (`D = netD`,
        then `netD = copy.deepcopy(netD)`: `HeldModules.keeps`). A path no statement bound
        (`netD.module`, which is `netD` itself in the model: what DataParallel / DDP wrap)
        holds the value from then on."""
        if not (
            isinstance(target, ast.Name)
            and isinstance(source, ast.Attribute | ast.Name)
            and (identifies(value.shape) or shapes.is_optimizer(value.shape))
        ):
            return
        function = self.followed[-1][0] if self.followed and not self.frame.is_top else None
        if not self.held.bound_once(target.id, function):
            return  # bound in two branches, or again later: which binding holds is not known
        root = dotted_name(source)
        root = root.partition(".")[0] if root is not None else None
        if root != "self" and not self.held.keeps(root, function, target.lineno):
            return  # the source's name is bound again (`netD = copy.deepcopy(netD)`)
        path = self.module_path(source)
        if path is not None and path.partition(".")[0] != self.key_for(target):
            self.frame.aliases[target.id] = path
            self.frame.attribute_aliases.add(target.id)
            env.setdefault(path, value)

    def _alias_method(self, target: ast.expr, source: ast.expr, env: Env) -> None:
        """`action_train = player.action_train`, bound once in the scope: a call of the name
        runs the method on that object, as `player.action_train(...)` would (a3c_continuous'
        worker). Bound to anything else, the name is its own again (`bind`)."""
        if not isinstance(target, ast.Name):
            return
        self.frame.method_aliases.pop(target.id, None)
        if not isinstance(source, ast.Attribute) or dotted_name(source) is None:
            return
        function = self.followed[-1][0] if self.followed and not self.frame.is_top else None
        if not self.held.bound_once(target.id, function):
            return
        root = dotted_name(source).partition(".")[0]
        if root != "self" and not self.held.keeps(root, function, target.lineno):
            return  # the object's name is bound again: which object runs it is not known
        resolved = self._resolve(source, env, ast.Call(func=source, args=[], keywords=[]))
        if resolved[0] == "method":
            self.frame.method_aliases[target.id] = source

    def _note_listed(self, node: ast.Assign, target: ast.expr, source: ast.expr) -> None:
        """`models = [encoder, regressor]`: the list's items are those names' objects.
        `groups = [{"params": net.parameters()}, ...]`: the list is those param groups."""
        key = self.key_for(target) if len(node.targets) == 1 else None
        if key is None:
            return
        displayed = isinstance(source, ast.List | ast.Tuple)
        if displayed and all(isinstance(e, ast.Name | ast.Attribute) for e in source.elts):
            self.listed[key] = tuple(self.module_path(e) for e in source.elts)
        else:
            self.listed.pop(key, None)
        if displayed and source.elts and all(isinstance(e, ast.Dict) for e in source.elts):
            self.param_groups[key] = tuple(source.elts)
        else:
            self.param_groups.pop(key, None)

    def _unpack_listed(self, node: ast.Assign, target: ast.expr, source: ast.expr) -> None:
        """`[optimizer, optimizer_conf] = optimizers` of a list built from names (passed in
        as an argument): each name is the object it was built from, as a parameter given that
        object directly is."""
        if len(node.targets) != 1 or not isinstance(target, ast.Tuple | ast.List):
            return
        if not isinstance(source, ast.Name) or self.frame.is_top:
            return  # only where a call was followed: a function on its own has no caller
        path = self.module_path(source)
        items = self.listed.get(path) if path is not None else None
        if items is None or len(items) != len(target.elts):
            return
        for element, item in zip(target.elts, items, strict=True):
            if isinstance(element, ast.Name) and item is not None:
                self.frame.aliases[element.id] = item

    def stmt_AnnAssign(self, node: ast.AnnAssign, env: Env) -> Flow:
        if node.value is not None:
            self.bind(node.target, self.eval(node.value, env), env)
        return Flow(normal=env)

    def note_accumulation(
        self,
        added: ast.expr,
        value: Value,
        container: ast.expr,
        statement: ast.stmt | None = None,
    ) -> None:
        """`total += loss`, `losses.append(loss)`, `total = total + loss` in a loop of this
        scope, adding a value with graph built by known code: what LF006 asks about. An item
        added to (`losses["g"] += loss_g`, `totals[k] += loss`, a meter's `self.losses[key]
        += loss[key]`, `history["train"]["loss"].append(loss)`) is its container's total.
        `statement`: the assignment that adds (`total += loss`), where it is one."""
        while isinstance(container, ast.Subscript):
            container = container.value
        if not self.frame.is_top:
            self._note_called_accumulation(value, container)
            if statement is not None:
                self._note_called_total(statement, added, value, container)
            return
        if not self.loop_stack or self.top_statement is None:
            return
        key = self.key_for(container)
        if key is None or not value.graphs:
            return
        known = any(not g.opaque for g in value.graphs)  # else: of unknown origin
        record = (self.top_statement, added, key, self.loop_stack[-1], known)
        if all(r[0] is not record[0] for r in self.obs.accumulations):
            self.obs.accumulations.append(record)

    def stmt_AugAssign(self, node: ast.AugAssign, env: Env) -> Flow:
        value = self.eval(node.value, env)
        if self.no_grad:  # `total += loss` under no_grad: the sum holds none of loss's graph
            value = Value(frozenset(), value.shape)
        if isinstance(node.op, ast.Add):
            self.note_accumulation(node.value, value, node.target, node)
        old = self.eval(node.target, env) if not isinstance(node.target, ast.Subscript) else EMPTY
        shape = (
            TENSOR if TENSOR in (old.shape, value.shape) else shapes.join(old.shape, value.shape)
        )
        positions = concatenated_positions(old, value) if isinstance(node.op, ast.Add) else None
        combined = Value(old.graphs | value.graphs, shape, positions)
        self.bind(node.target, combined, env, exact=not isinstance(node.target, ast.Subscript))
        return Flow(normal=env)

    def stmt_Expr(self, node: ast.Expr, env: Env) -> Flow:
        self.eval(node.value, env)
        enabled = self.grad_mode_set(node.value)
        if enabled is not None:
            self.no_grad = not enabled  # until the block ends (`exec_block`) or it is set again
        return Flow(normal=env)

    def stmt_Return(self, node: ast.Return, env: Env) -> Flow:
        value = self.eval(node.value, env) if node.value is not None else EMPTY.with_shape(NONE)
        if _builds_exception(node.value):
            # `return NotImplementedError(...)` for `raise` (MUNIT's `get_scheduler`): what
            # a caller gets there is no value it can use, so not one its other paths join
            return Flow(normal=None)
        return Flow(normal=None, returns=dict(env), returned=value)

    def stmt_Break(self, node: ast.Break, env: Env) -> Flow:
        return Flow(normal=None, breaks=dict(env))

    def stmt_Continue(self, node: ast.Continue, env: Env) -> Flow:
        return Flow(normal=None, continues=dict(env))

    def stmt_Raise(self, node: ast.Raise, env: Env) -> Flow:
        if node.exc is not None:
            self.eval(node.exc, env)
        return Flow(normal=None)

    def stmt_Delete(self, node: ast.Delete, env: Env) -> Flow:
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Slice):
                self.empty(target.value, env)  # `del policy.saved_log_probs[:]`
                continue
            if isinstance(target, ast.Subscript):  # `del transition[0]`: positions move
                self.forget_positions(self.key_for(target.value), env)
                continue
            key = self.key_for(target)
            if key is not None:
                env.pop(key, None)
        return Flow(normal=env)

    def empty(self, container: ast.expr, env: Env) -> None:
        """`del xs[:]`, `xs.clear()`: the container no longer holds what it held."""
        key = self.key_for(container)
        if key is not None:
            old = env.get(key)
            env[key] = Value(frozenset(), old.shape if old is not None else None)
            self.note_write(key)
            self.slots.forget(key, env)

    def stmt_FunctionDef(self, node: ast.stmt, env: Env) -> Flow:
        """A function defined inside the function being run (not one of the module's): its
        calls there run it as a closure (`Frame.nested`) when it does autograd work or
        rebinds the enclosing function's names (`closure_work`); others stay unknown calls,
        as a closure building a configuration is. A decorator other than a no-grad one may
        wrap it in anything: such a function is not followed."""
        if self.symbols.functions.get(node.name) is not node:
            key = self.key_for(ast.Name(node.name))
            plain = all(no_grad_decorator(d, self.symbols) for d in node.decorator_list)
            worth = self.symbols.remember(("closure work", id(node)), closure_work, node)
            if plain and worth and key is not None:
                env.pop(key, None)  # the name means the function now, not what it held
                self.frame.nested[node.name] = node
            else:
                self.frame.nested.pop(node.name, None)
        return Flow(normal=env)

    stmt_AsyncFunctionDef = stmt_FunctionDef

    def stmt_Pass(self, node: ast.stmt, env: Env) -> Flow:
        return Flow(normal=env)

    stmt_ClassDef = stmt_Import = stmt_ImportFrom = stmt_Global = stmt_Nonlocal = stmt_Pass

    def stmt_If(self, node: ast.If, env: Env) -> Flow:
        decided = self._constant_test(node.test)
        if decided is not None:  # `if MODE == "detach":` with `MODE = "detach"` above
            self.eval(node.test, env)
            return self.exec_block(node.body if decided else node.orelse, dict(env))
        if self.assumed and unnegated(node.test)[0] in self.assumed:
            # a split run took one value of the setting (`conditions.invariant_splits`)
            self.eval(node.test, env)
            taken = self._known_test(node.test)
            return self.exec_block(node.body if taken else node.orelse, dict(env))
        branches = self._setting_branches(node)
        if branches is not None:  # one of them runs: the setting is one of the choices
            for test in branches[0]:
                self.eval(test, env)
            flow = None
            for body in branches[1]:
                run = self.exec_block(body, dict(env))
                flow = run if flow is None else flow.join(run)
            return flow
        self.eval(node.test, env)
        known = self._known_test(node.test)
        if known is None:  # `if self.training:` in a module's forward
            known = self._mode_test(node.test, env)
        if known is not None:  # `if t == 0:` in a loop over t: the phase decides
            return self.exec_block(node.body if known else node.orelse, dict(env))
        taken, skipped = dict(env), dict(env)
        none_check = self._none_check(self._undecided_part(node.test))
        if none_check is not None:
            key, none_when_true = none_check
            if key in env:  # on the branch where it is None, it holds no graph
                (taken if none_when_true else skipped)[key] = EMPTY.with_shape(NONE)
                # and on the other it is what it is when not None (`if optimizer is None:
                # optimizer = Adam(...)` for an argument that may be None or an optimizer)
                value = env[key]
                if shapes.present(value.shape) != value.shape:
                    present = dataclasses.replace(value, shape=shapes.present(value.shape))
                    (skipped if none_when_true else taken)[key] = present
        type_check = self._type_check(self._undecided_part(node.test))
        if type_check is not None and type_check[0] in env:
            key, kind, kind_when_true = type_check
            value = env[key]
            shape = shapes.present(value.shape)
            of_kind = (shape == shapes.TENSOR) if kind == "tensor" else _tuple_shape(shape)
            of_other = _tuple_shape(shape) if kind == "tensor" else shape == shapes.TENSOR
            if of_kind:
                # a tensor (a tuple) is not on the branch where the test says it is not one:
                # that path is not this value's (`if torch.is_tensor(val): val = val.item()`
                # in a meter), or it is the value's None (`elif isinstance(h, tuple):`)
                other = shapes.NONE if shape != value.shape else shapes.OTHER
                (skipped if kind_when_true else taken)[key] = EMPTY.with_shape(other)
            elif of_other:  # `isinstance(hidden, torch.Tensor)` of an LSTM's (h, c)
                (taken if kind_when_true else skipped)[key] = EMPTY.with_shape(shapes.OTHER)
            elif kind == "tensor" and shape in (shapes.UNKNOWN, None):
                # of unknown kind (a meter's `val`): a tensor where the test says so, and a
                # plain value without graph on the other branch (`if torch.is_tensor(val):
                # val = val.detach()`, then `self.sum += val * n`)
                (taken if kind_when_true else skipped)[key] = value.with_shape(shapes.TENSOR)
                (skipped if kind_when_true else taken)[key] = EMPTY.with_shape(shapes.OTHER)
        return self.exec_block(node.body, taken).join(self.exec_block(node.orelse, skipped))

    def _type_check(self, test: ast.expr) -> tuple[str, str, bool] | None:
        """`torch.is_tensor(x)` or `isinstance(x, torch.Tensor)` (or `Variable`, which has
        been `Tensor` since PyTorch 0.4) -> (x, "tensor", True),
        `isinstance(x, tuple)` -> (x, "tuple", True); under `not`, False."""
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        call = test.operand if negated else test
        if not (isinstance(call, ast.Call) and call.args and not call.keywords):
            return None
        kind = None
        if self.symbols.qualify(call.func) == "torch.is_tensor" and len(call.args) == 1:
            kind = "tensor"
        elif isinstance(call.func, ast.Name) and call.func.id == "isinstance":
            if len(call.args) == 2 and self.symbols.qualify(call.args[1]) in TENSOR_TYPES:
                kind = "tensor"
            elif len(call.args) == 2 and _names_builtin(call.args[1], "tuple"):
                kind = "tuple"
        key = self.key_for(call.args[0]) if kind is not None else None
        return None if key is None else (key, kind, not negated)

    def _setting_branches(self, node: ast.If) -> tuple[list, list] | None:
        """For `if args.cell == "lstm": ... elif args.cell == "gru": ...` with no `else`,
        inside a loop that never assigns the setting: (the tests, the branches). A setting
        takes one of the values its code handles (an argparse choice, a config entry), so
        the path where no branch runs is not one a real run takes; following it would carry
        the previous iteration's value past the branch that resets it. None otherwise."""
        if not self.loop_stack:
            return None
        tests, bodies, current = [node.test], [node.body], node
        while len(current.orelse) == 1 and isinstance(current.orelse[0], ast.If):
            current = current.orelse[0]
            tests.append(current.test)
            bodies.append(current.body)
        if current.orelse or len(tests) < 2:
            return None
        subjects = {_setting_subject(test) for test in tests}
        if len(subjects) != 1 or None in subjects:
            return None
        subject = subjects.pop()
        loop = self.obs.loops.get(self.loop_stack[-1])
        root = subject.split(".")[0].split("[")[0]
        if loop is None or root in names_assigned_in(loop) or _stores_to(loop, subject):
            return None
        return tests, bodies

    def _decided_test(self, test: ast.expr) -> bool | None:
        """The value of a test of module constants, of a loop counter in the phase being
        run, or of a setting a split run assumes (`stmt_If`); None when both sides run."""
        decided = self._constant_test(test)
        return decided if decided is not None else self._known_test(test)

    def _known_test(self, test: ast.expr) -> bool | None:
        """The value of a test of a loop counter (`t == 0`, `t % k == k - 1`) in the phase
        of the iteration being run, or of a test the loop cannot change in the run that
        assumes it, else None."""
        if self.assumed:
            key, flipped = unnegated(test)
            if key in self.assumed:
                return self.assumed[key] != flipped
        if not self.phases:
            return None
        for name in sorted({n.id for n in walk(test) if isinstance(n, ast.Name)}):
            known = self.phases.get(self.key_for(ast.Name(name)) or name)
            if known is not None and (value := known[0].holds(test, known[1])) is not None:
                return value
        return None

    def _mode_test(self, test: ast.expr, env: Env) -> bool | None:
        """`module.training` or `not module.training` (`CallsMixin.training_mode`)."""
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        mode = self.training_mode(test.operand if negated else test, env)
        return None if mode is None else mode != negated

    def _constant_test(self, test: ast.expr) -> bool | None:
        """The value of a test of module constants (`Symbols.constant`): `MODE == "detach"`,
        `MODE != "a"`, `MODE in ("a", "b")`, `USE_LSTM`, `not USE_LSTM`, `CLIP is None`, a
        literal (`if True:`, `if 1:`, `if 1 == 1:`, `if (r := True):`), and `and`/`or` of
        such, where a part that decides alone is enough (`reset or True`); None otherwise.
        The branch it rules out is not a path this code takes as written."""
        if isinstance(test, ast.Constant):
            return bool(test.value)
        if isinstance(test, ast.NamedExpr):  # `if (reset := True):` tests what it binds
            return self._constant_test(test.value)
        if isinstance(test, ast.BoolOp):
            parts = [self._constant_test(value) for value in test.values]
            decisive = isinstance(test.op, ast.Or)  # the value that decides alone
            if decisive in parts:
                return decisive
            return None if None in parts else not decisive
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self._constant_test(test.operand)
            return None if inner is None else not inner
        if isinstance(test, ast.Name | ast.Attribute):
            value = self._constant_of(test)
            return None if value is NOT_CONSTANT else bool(value)
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(left, ast.Constant) and isinstance(op, ast.Eq | ast.NotEq):
            left, right = right, left
        value = left.value if isinstance(left, ast.Constant) else self._constant_of(left)
        if value is NOT_CONSTANT:
            return None
        return _compared(value, op, right)

    def _undecided_part(self, test: ast.expr) -> ast.expr:
        """The one part of an `and` (`or`) whose other parts are constants that do not decide
        it (`_constant_test`): `h is not None` of `if h is not None and self.truncate:` with
        `self.truncate = True`; else `test` itself."""
        if not isinstance(test, ast.BoolOp):
            return test
        neutral = isinstance(test.op, ast.And)  # the value a part adds nothing with
        undecided = [part for part in test.values if self._constant_test(part) is not neutral]
        return undecided[0] if len(undecided) == 1 else test

    def _constant_of(self, node: ast.expr) -> object:
        """A module constant's value, when `node` names one that no local shadows; in a
        called function, a parameter this call binds to a literal that the body never binds
        again (`Call.literals`); or, in a method, a setting of `self` its class's `__init__`
        binds once to a literal, which no module the analysis looked into sets anywhere else
        (`Symbols.instance_constant`)."""
        if isinstance(node, ast.Attribute):
            return self._instance_constant(node)
        if not isinstance(node, ast.Name):
            return NOT_CONSTANT
        key = self.key_for(node)
        frame = self.frame
        if node.id in frame.literals and key == frame.prefix + node.id:
            return frame.literals[node.id]
        return self.symbols.constant(node.id) if key == node.id else NOT_CONSTANT

    def _instance_constant(self, node: ast.Attribute) -> object:
        cls = self.frame.cls
        if cls is None or not (isinstance(node.value, ast.Name) and node.value.id == "self"):
            return NOT_CONSTANT
        home = self.symbols.home(cls.node)
        names = {node.attr, mangled_name(cls.node.name, node.attr)}
        seen = self._modules_seen()
        for module in seen:
            if module is not home and any(module.stores_attribute(n) != 0 for n in names):
                return NOT_CONSTANT  # set from outside the class, by name or by `setattr`
        value = home.instance_constant(cls, node.attr)
        if value is NOT_CONSTANT:
            argument = home.init_argument(cls, node.attr)
            if argument is not None:
                value = _constructed_with(cls, argument, seen)
        return value

    def _modules_seen(self) -> tuple[Symbols, ...]:
        """The modules the analysis has looked into: the file's, the running code's, and
        those that define a function or class either of them uses. Kept while neither
        module's `homes` grows (a table the run only adds to: `Symbols.adopt`)."""
        running, analysed = self.symbols, self.instances.symbols
        sizes = (len(running.homes), len(analysed.homes))
        kept = self._seen_modules.get((id(running), id(analysed)))
        if kept is not None and kept[0] is running and kept[1] is analysed and kept[2] == sizes:
            return kept[3]
        seen = {id(s): s for s in (running, analysed)}
        for symbols in (running, analysed):
            seen.update((id(home), home) for home in symbols.linked_homes())
        modules = tuple(seen.values())
        self._seen_modules[(id(running), id(analysed))] = (running, analysed, sizes, modules)
        return modules

    def _none_check(self, test: ast.expr) -> tuple[str, bool] | None:
        """`x is None` -> (x, True); `x is not None` -> (x, False)."""
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
            return None
        right = test.comparators[0]
        if not (isinstance(right, ast.Constant) and right.value is None):
            return None
        key = self.key_for(test.left)
        if key is None or not isinstance(test.ops[0], ast.Is | ast.IsNot):
            return None
        return key, isinstance(test.ops[0], ast.Is)

    def stmt_Match(self, node: ast.Match, env: Env) -> Flow:
        self.eval(node.subject, env)
        flow = Flow(normal=dict(env))
        for case in node.cases:
            flow = flow.join(self.exec_block(case.body, dict(env)))
        return flow

    def stmt_With(self, node: ast.With, env: Env) -> Flow:
        disables_grad = unknown = False
        for item in node.items:
            if self._is_no_grad_context(item.context_expr):
                disables_grad = True
            else:
                unknown = unknown or self.may_switch_grad(item.context_expr)
                self.eval(item.context_expr, env)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, EMPTY, env)
        outer, self.no_grad = self.no_grad, self.no_grad or disables_grad
        self.grad_mode_unknown += unknown
        try:
            return self.exec_block(node.body, env)
        finally:
            self.no_grad = outer
            self.grad_mode_unknown -= unknown

    stmt_AsyncWith = stmt_With

    def stmt_Try(self, node: ast.Try, env: Env) -> Flow:
        before = dict(env)
        body = self.exec_block(node.body, env)
        flow = self.exec_block(node.orelse, body.normal) if body.normal is not None else body
        flow = body.then(flow) if body.normal is not None else body
        handler_start = join_envs(before, body.normal)
        for handler in node.handlers:
            start = dict(handler_start or before)
            if handler.name:
                start[self.frame.prefix + handler.name] = EMPTY
            flow = flow.join(self.exec_block(handler.body, start))
        if node.finalbody and flow.normal is not None:
            flow = flow.then(self.exec_block(node.finalbody, flow.normal))
        return flow

    stmt_TryStar = stmt_Try

    def stmt_For(self, node: ast.For | ast.AsyncFor | ast.While, env: Env) -> Flow:
        """A loop whose body repeats a test it cannot change (`if args.aux:` twice) is run
        once per value of it (`conditions`); the flows after it are joined."""
        flow = None
        items = self._literal_items(node, env)
        dimensions = self._loop_facts(node, env)[1]
        with self._listing(dimensions):
            for assumed in self._split_runs(dimensions):
                with self._assuming(assumed):
                    if items is not None:
                        run = self._run_unrolled(node, dict(env), items)
                    else:
                        run = self.loop_memo.run(
                            self, node, dict(env), lambda entry: self._run_loop(node, entry)
                        )
                flow = run if flow is None else flow.join(run)
        return flow

    @contextlib.contextmanager
    def _listing(self, dimensions: list[tuple[dict, ...]]):
        """The runs of a split loop or scope: those of a setting taken to be one of its
        listed values (`conditions.ListedValues`) count in `listed_runs` while they run."""
        listed = any(isinstance(d, ListedValues) for d in dimensions)
        self.listed_runs += listed
        try:
            yield
        finally:
            self.listed_runs -= listed

    @contextlib.contextmanager
    def _assuming(self, assumed: dict):
        """One split run: the tests it assumes hold their values until it ends."""
        self.assumed.update(assumed)
        try:
            yield
        finally:
            for key in assumed:
                del self.assumed[key]

    def _split_runs(self, dimensions: list[tuple[dict, ...]]) -> list[dict]:
        """What each run of a split loop or scope assumes beyond what is assumed already
        (`invariant_splits`): every combination of one assignment per dimension, leaving out
        an assignment an enclosing split contradicts; one empty assumption when nothing
        splits."""
        assumed = self.assumed
        combined: list[dict] = [{}]
        for dimension in dimensions:
            consistent = [
                {k: v for k, v in a.items() if k not in assumed}
                for a in dimension
                if all(assumed.get(k, v) == v for k, v in a.items())
            ]
            distinct = [a for i, a in enumerate(consistent) if a not in consistent[:i]]
            if len(distinct) < 2:
                continue  # settled by an enclosing split
            combined = [{**c, **a} for c in combined for a in distinct]
        return combined

    stmt_AsyncFor = stmt_While = stmt_For

    def _literal_items(
        self, node: ast.AST, env: Env
    ) -> list[list[tuple[ast.expr, ast.expr]]] | None:
        """The items of a `for` loop over a literal list or tuple of names (`for loss in
        [loss_a, loss_b]:`, `for opt, loss in zip([opt_a, opt_b], [loss_a, loss_b]):`), or
        over such lists passed under a name (`for i, (opt, loss) in enumerate(zip(opts,
        losses)):` in LeakGAN's `optimize_multi(self.gen_opt, [mana_loss, work_loss])`, each
        item then read as `opts[0]`, ...), each as (target, expression it takes) pairs, when
        the body carries nothing from one item to the next: Python runs the body once per
        item, in order, each time on that item alone (`_run_unrolled`). None for any other
        loop."""
        if not isinstance(node, ast.For) or node.orelse:
            return None
        target, iterable, index = node.target, node.iter, None
        if (
            isinstance(iterable, ast.Call)
            and isinstance(iterable.func, ast.Name)
            and iterable.func.id == "enumerate"
            and len(iterable.args) == 1
            and not iterable.keywords
            and isinstance(target, ast.Tuple)
            and len(target.elts) == 2
            and isinstance(target.elts[0], ast.Name)
        ):
            index, target, iterable = target.elts[0], target.elts[1], iterable.args[0]
        lists, targets = [iterable], [target]
        called = iterable.func if isinstance(iterable, ast.Call) else None
        if isinstance(called, ast.Name) and called.id == "zip" and not iterable.keywords:
            lists = iterable.args
            targets = target.elts if isinstance(target, ast.Tuple) else []
        if not targets or len(targets) != len(lists):
            return None
        if not all(isinstance(t, ast.Name) for t in targets):
            return None
        # lists passed under a name are read by position only where paired by `zip`: a loop
        # over one (`for h in hidden: h.detach_()`) changes what its items are held by
        paired = len(lists) > 1
        elements = [self._listed_elements(e, env, named=paired) for e in lists]
        if any(e is None for e in elements) or len({len(e) for e in elements}) != 1:
            return None
        count = len(elements[0])
        if not 2 <= count <= MAX_UNROLLED or not all(
            _named_item(item) for e in elements for item in e
        ):
            return None
        carried = self._loop_facts(node, env)[2] - {t.id for t in targets}
        if carried:
            return None  # a state carried across items: the loop is run as a loop
        items = []
        for position in range(count):
            pairs = [(t, e[position]) for t, e in zip(targets, elements, strict=True)]
            if index is not None:
                pairs.insert(0, (index, ast.Constant(position)))
            items.append(pairs)
        return items

    def _listed_elements(self, container: ast.expr, env: Env, named: bool) -> list[ast.expr] | None:
        """The items of a literal list or tuple; with `named`, of a name holding a list or
        tuple whose items the model keeps apart (`[opt_a, opt_b]`, `[loss_a, loss_b]` passed
        in), each read by its position (`opts[0]`); None otherwise."""
        if isinstance(container, ast.List | ast.Tuple):
            return container.elts
        if not named or not isinstance(container, ast.Name | ast.Attribute):
            return None
        key = self.key_for(container)
        value = env.get(key) if key is not None else None
        if value is None:
            return None
        if isinstance(value.shape, tuple) and value.shape[:1] == ("tuple",):
            count = len(value.shape[1])
        elif value.parts is not None:
            count = len(value.parts)
        else:
            return None
        return [
            ast.Subscript(value=container, slice=ast.Constant(k), ctx=ast.Load())
            for k in range(count)
        ]

    def _run_unrolled(
        self, node: ast.For, env: Env, items: list[list[tuple[ast.expr, ast.expr]]]
    ) -> Flow:
        """`_literal_items`' loop: its body once per item, in order, the target bound to
        that item alone (a loss built from another network than the one before it is not
        the graph the backward before it freed)."""
        loop_id = self._id("loop", node)
        if self.frame.is_top:
            self.obs.loops[loop_id] = node
            self.top_loops.add(loop_id)
        exits, current = Flow(normal=None), env
        self.loop_stack.append(loop_id)
        try:
            for item in items:
                body_env = dict(current)
                for target, element in item:
                    self.bind(target, self.eval(element, body_env), body_env)
                flow = self.exec_block(node.body, body_env)
                exits = exits.join(Flow(None, None, flow.breaks, flow.returns, flow.returned))
                current = join_envs(flow.normal, flow.continues)
                if current is None:
                    break
        finally:
            self.loop_stack.pop()
        normal = join_envs(current, exits.breaks)
        return Flow(normal, None, None, exits.returns, exits.returned)

    def _loop_facts(
        self, node: ast.AST, env: Env | None = None
    ) -> tuple[Counter | None, list[tuple[dict, ...]], set[str]]:
        """The loop's counter, its invariant tests and the names it carries from one
        iteration to the next, read once per loop (a nested loop is run again in every round
        of the loops around it). `env`: the environment the loop starts from, which says the
        class of the object whose methods a loop outside any class calls (`_object_class`)."""
        cls = self.frame.cls if self.frame.self_path is not None else None
        receiver = "self"
        if cls is None and env is not None:
            receiver, cls = self._object_class(node, env)
        forwards = self._held_forwards(node, cls, receiver, env)
        key = (id(node), id(cls), forwards)  # a base class's loop: its subclass's methods
        facts = self._facts.get(key)
        if facts is None:
            facts = self._facts[key] = self._kept_loop_facts(node, cls, receiver, forwards)
        return facts

    def _held_forwards(
        self, node: ast.AST, cls: ClassInfo | None, receiver: str, env: Env | None
    ) -> frozenset[str]:
        """The calls, in the loop or function `node` and the methods it calls on `self`, of
        a module that another object holds (`self.master.avg_model(x)`, where `self.master`
        is an object of a project class that stores `avg_model` and computes no attribute of
        that name): a forward pass, which hands nothing over (`conditions.invariant_splits`).
        By dotted path, as the code spells them."""
        if env is None:
            return frozenset()
        key = ("held calls", id(node), id(cls))
        calls = self._facts.get(key)
        if calls is None:
            bodies = (node, *self._methods_called_on_self(node, cls, receiver))
            # a method's `self` is the loop's only where the loop's receiver is `self` too
            calls = self._facts[key] = _calls_on_paths(bodies if receiver == "self" else (node,))
        found = set()
        for path, owner in calls:
            value = env.get(self.key_for(owner) or "")
            info = self.class_of(value.shape) if value is not None else None
            if info is None:
                continue
            computed, held = self.symbols.class_attributes(info)
            name = path.rpartition(".")[2]
            if computed is not None and name not in computed and name in held:
                found.add(path)
        return frozenset(found)

    def _scope_splits(self, function: FunctionNode, env: Env) -> list[tuple[dict, ...]]:
        """The splits of a function run as its own scope (`invariant_splits`, with the
        function's body and the methods it calls on `self` read as one iteration)."""
        cls = self.frame.cls if self.frame.self_path is not None else None
        forwards = self._held_forwards(function, cls, "self", env)
        key = ("scope", id(function), id(cls), forwards)
        splits = self._facts.get(key)
        if splits is None:
            methods = self._methods_called_on_self(function, cls)
            splits = []
            if self._says_backward((function, *methods)):  # else no split changes a finding
                computed, held = (
                    self.symbols.class_attributes(cls) if cls is not None else (None, None)
                )
                rebound = self.symbols.global_names()
                splits = invariant_splits(
                    function, rebound, methods, computed, held or frozenset(), forwards
                )
            self._facts[key] = splits
        return splits

    def _says_backward(self, functions: tuple[FunctionNode, ...]) -> bool:
        """Whether one of `functions` names a backward (`loss.backward()`,
        `accelerator.backward(loss)`), by its module's index of the words each scope says."""
        for function in functions:
            index = self.home_of(function).index
            words = index.words.get(id(function)) if index is not None else None
            if words is None or not BACKWARD_WORDS.isdisjoint(words):
                return True
        return False

    def _object_class(self, node: ast.AST, env: Env) -> tuple[str, ClassInfo | None]:
        """For a loop outside any class, the project class of the one object whose methods
        it calls (`model.update(x)`, not rebound in the loop), when there is one: the tests
        those methods repeat on `self` (`if self.use_aux:` where `run()` computes an output
        and again where `backward_all()` adds its loss) are that object's, and read as part
        of the loop (`_methods_called_on_self`), with what its class computes and stores."""
        receivers = kept_fact(self.kept, "method receivers", node, lambda: _method_receivers(node))
        found = {}
        for name in receivers:
            value = env.get(self.key_for(ast.Name(name)) or name)
            info = self.class_of(value.shape) if value is not None else None
            if info is not None:
                found[name] = info
        if len(found) != 1:
            return "", None  # none, or two objects: whose `self` a test reads is unsure
        return next(iter(found.items()))

    def _kept_loop_facts(
        self,
        node: ast.AST,
        cls: ClassInfo | None,
        receiver: str = "self",
        forwards: frozenset[str] = frozenset(),
    ) -> tuple[Counter | None, list[tuple[dict, ...]], set[str]]:
        """`_loop_facts` as an earlier analysis of the same document found them (`kept`),
        while the loop is the same object and every answer they used from outside it is too:
        the names declared `global`, each module constant its counter asked for, the methods
        it calls on `self` (or on the object of `cls`) and what that class computes and
        stores (`Symbols.class_attributes`)."""
        rebound = self.symbols.global_names()
        methods = self._methods_called_on_self(node, cls, receiver)
        computed, held = self.symbols.class_attributes(cls) if cls is not None else (None, None)
        found = self.kept.get(("loop facts", id(node))) if self.kept is not None else None
        if (
            found is not None
            and found[0] is node
            and found[1][0] == rebound
            and found[1][2] == (computed, held, forwards)
            and len(found[1][3]) == len(methods)
            and all(a is b for a, b in zip(found[1][3], methods, strict=True))
            and all(self._module_constant(name) == value for name, value in found[1][1])
        ):
            return found[2]
        asked: list[tuple[str, int | None]] = []

        def constant(name: str) -> int | None:
            asked.append((name, self._module_constant(name)))
            return asked[-1][1]

        splits = invariant_splits(node, rebound, methods, computed, held or frozenset(), forwards)
        facts = (loop_counter(node, constant), splits, _loop_carried_names(node))
        if self.kept is not None:
            inputs = (rebound, tuple(asked), (computed, held, forwards), methods)
            keep(self.kept, ("loop facts", id(node)), (node, inputs, facts))
        return facts

    def _methods_called_on_self(
        self, node: ast.AST, cls: ClassInfo | None, receiver: str = "self"
    ) -> tuple:
        """The methods of `cls` (the running method's class, or that of the object whose
        methods the loop calls, `_object_class`) that the loop calls on `self` (or on that
        object: `self._rollout()`, `model.update(x)`), and those they call on `self` in turn
        (at most `MAX_INLINED_METHODS`), for `invariant_splits` to read as part of the loop."""
        if cls is None:
            return ()
        found: list = []
        todo = [node]
        while todo:
            top = todo.pop()
            for call in walk(top):
                if not isinstance(call, ast.Call) or dotted_name(call.func) is None:
                    continue
                called_on, _, name = dotted_name(call.func).rpartition(".")
                # the loop's own calls are on `receiver`; a method's, on its `self`
                wanted = receiver if top is node else "self"
                method = self.symbols.method(cls, name) if called_on == wanted else None
                if method is not None and method not in found:
                    if len(found) == MAX_INLINED_METHODS:
                        return tuple(found)
                    found.append(method)
                    todo.append(method)
        return tuple(found)

    def _module_constant(self, name: str) -> int | None:
        """`K` in `t % K` where the module binds it once to an integer (not a local)."""
        if self.key_for(ast.Name(name)) != name:
            return None
        return self.symbols.int_constant(name)

    def _run_loop(self, node: ast.For | ast.AsyncFor | ast.While, env: Env) -> Flow:
        loop_id = self._id("loop", node)
        if self.frame.is_top:
            self.obs.loops[loop_id] = node
            self.top_loops.add(loop_id)
        # the calls of its iterable that build the items run once, here, as Python runs them,
        # each held under a name of its own as if the code bound it before the loop
        walked, named = self._walked(node, loop_id)
        fresh = self._fresh_items[id(node)] = {}
        if named:
            env = dict(env)
            for name, call in named:
                value = self._iterable(call, env)
                if value.shape == shapes.TENSOR or _splits_a_tensor(call):
                    env[self.key_for(name)] = value  # rows or pieces of one tensor: its graph
                else:  # a list or tuple, perhaps of separate forwards: each item as new
                    fresh[self.key_for(name)] = value
        head, exits, back = dict(env), Flow(normal=None), None
        outer_loops = tuple(self.loop_stack)
        # pieces built before the loop are the same graph in every iteration: a variable that
        # carries them across the back-edge (`outs` collecting `r_out[:, t]`) does not relabel
        # them, so a backward that consumes them consumes what every other name holds
        before_loop = {g.key for value in env.values() for g in value.graphs}
        ran = None  # what the back-edge carried: the state after one or more iterations
        # a loop whose body tests its counter (`if t == 0:`) runs once per kind of iteration
        # (`Phase`), each from what the iterations that can precede it leave
        counter = self._loop_facts(node, env)[0]
        counter_key = self.key_for(ast.Name(counter.index)) if counter else None
        outer_phase = self.phases.get(counter_key) if counter_key else None
        starts: dict[Phase, Env] = {p: dict(env) for p in counter.initials()} if counter else {}
        left = None  # what the last iterations leave, where the body tests for the last one
        pending = list(starts)
        rounds = MAX_LOOP_ROUNDS * (len(counter.residues) + 2 if counter else 1)
        self.loop_stack.append(loop_id)
        try:
            for _ in range(rounds):
                if counter_key is not None:
                    if not pending:
                        break
                    phase = pending.pop(0)
                    body_env = dict(starts[phase])
                    self.phases[counter_key] = (counter, phase)
                else:
                    body_env = dict(head)
                flow, written = self._run_iteration(node, body_env)
                exits = exits.join(Flow(None, None, flow.breaks, flow.returns, flow.returned))
                back_now = join_envs(flow.normal, flow.continues)
                back = join_envs(back, back_now) if counter_key is not None else back_now
                crossed = None
                if back_now is not None:
                    crossed = cross(back_now, loop_id, written, outer_loops, before_loop)
                ran = join_envs(ran, crossed) if crossed is not None else ran
                if counter_key is not None and phase.last and crossed is not None:
                    left = join_envs(left, crossed)
                if counter_key is not None:
                    for successor in counter.successors(phase) if crossed is not None else []:
                        grown = join_envs(starts.get(successor), crossed)
                        if grown != starts.get(successor):
                            starts[successor] = grown
                            pending += [] if successor in pending else [successor]
                    continue
                new_head = head if crossed is None else join_envs(head, crossed)
                if new_head == head:
                    break
                head = new_head
        finally:
            self.loop_stack.pop()
            if counter_key is not None:
                self.phases.pop(counter_key, None)
                if outer_phase is not None:
                    self.phases[counter_key] = outer_phase
        for start_env in starts.values():
            head = join_envs(head, start_env)
        if ran is not None:
            chained = self.obs.chained.setdefault(loop_id, set())
            for name in self._loop_facts(node, env)[2]:
                value = ran.get(self.key_for(ast.Name(name)) or name)
                if value is not None:
                    chained.update(g.key for g in value.graphs if g.crossed == loop_id)
        # a `for` loop is taken to run at least once (a loader, `range(n_critic)`): the state
        # a zero-trip loop would leave (the one before it) is no path real training takes
        runs = isinstance(node, ast.For | ast.AsyncFor) and ran is not None
        if counter is not None and counter.knows_last:
            ran = left  # only a last iteration leads out of the loop
        start = dict(ran if runs and ran is not None else head)
        source = self.key_for(walked.iter) if isinstance(node, ast.For | ast.AsyncFor) else None
        if source in start and back is not None and source in back and not back[source].graphs:
            # `for s in hidden: s.detach_()`: every element detached in place (a state is
            # never empty), so the container leaves the loop without graph
            for changed in self._changed_in_place(source):
                if changed in start:
                    start[changed] = Value(frozenset(), start[changed].shape)
                    self.note_write(changed)
        after = self.exec_block(node.orelse, start)
        normal = join_envs(after.normal, exits.breaks)
        flow = Flow(normal, after.continues, after.breaks, exits.returns, exits.returned).join(
            Flow(None, None, None, after.returns, after.returned)
        )
        return _without(flow, {self.key_for(name) for name, _ in named}) if named else flow

    def _run_iteration(
        self, node: ast.For | ast.AsyncFor | ast.While, body_env: Env
    ) -> tuple[Flow, set[str]]:
        """One iteration from `body_env`: the loop's test or item, then its body. Returns the
        body's flow and the keys it wrote."""
        walked = self._walked_loops[id(node)][1] if id(node) in self._walked_loops else node
        self.written_stack.append(set())
        self.element_loops.append(_walks_elements(walked))
        self.element_indices.append(_element_index(walked))
        self.iterated_containers.append(self.containers_iterated(walked))
        try:
            if isinstance(node, ast.While):
                self.eval(node.test, body_env)
            else:
                body_env.update(self._fresh_items.get(id(node), {}))
                items = self._iterable(walked.iter, body_env)
                source, target = self.key_for(walked.iter), self.key_for(node.target)
                if source is not None and target is not None:
                    self.iterated_from[target] = source
                item = Value(
                    items.graphs,
                    shapes.item_shape(items.shape),
                    self.item_parts(walked.iter, items, body_env),
                )
                self.bind(node.target, item, body_env)
                self.iterate_elements(node.target, walked.iter, body_env)
            flow = None
            runs = self._split_runs(self._iteration_splits(node))
            for assumed in runs:  # one per value of the tests an iteration keeps
                with self._assuming(assumed):
                    run = self.exec_block(node.body, dict(body_env) if len(runs) > 1 else body_env)
                flow = run if flow is None else flow.join(run)
        finally:
            written = self.written_stack.pop()
            self.element_loops.pop()
            self.element_indices.pop()
            self.iterated_containers.pop()
        return flow, written

    def _iteration_splits(self, node: ast.AST) -> list[tuple[dict, ...]]:
        """`conditions.iteration_splits` of the loop, read once per loop (`_split_runs`
        leaves out a test an enclosing split already assumes)."""
        key = ("iteration", id(node))
        splits = self._facts.get(key)
        if splits is None:
            splits = self._facts[key] = iteration_splits(node, self.symbols.global_names())
        return splits

    def _iterable(self, node: ast.expr, env: Env) -> Value:
        """A loop's iterable, or a call in it, evaluated for the items it gives."""
        self.iterating = True
        try:
            return self.eval(node, env)
        finally:
            self.iterating = False

    def _walked(self, node: ast.AST, loop_id: int) -> tuple[ast.AST, list]:
        """The loop as its iterations walk it, and the calls to make before it. For a `for`
        loop whose iterable calls what builds its items (`enumerate(net(x))`,
        `net(x).split(4)`), a stand-in whose iterable names each such call instead
        (`enumerate(#iterable3_0)`), walked as the loop over a list bound before it is;
        (name, call) for each. Else the loop itself, and nothing to call."""
        cached = self._walked_loops.get(id(node))
        if cached is not None and cached[0] is node:
            return cached[1], cached[2]
        named: list[tuple[ast.Name, ast.expr]] = []
        walked = node
        if isinstance(node, ast.For | ast.AsyncFor):
            iterated = _named_builders(node.iter, f"#iterable{loop_id}_", named)
            if named:
                walked = ast.copy_location(
                    type(node)(target=node.target, iter=iterated, body=node.body, orelse=[]),
                    node,
                )
        self._walked_loops[id(node)] = (node, walked, named)
        return walked, named

    # ---------------------------------------------------------------- elements
    def item_parts(self, iterated: ast.expr, items: Value, env: Env):
        """What each position of the items holds, when the loop walks one list of tuples
        (`for r, prob in self.data[::-1]`), else None."""
        if items.item_parts is not None:
            return items.item_parts
        if isinstance(iterated, ast.Call) and getattr(iterated.func, "id", "") == "zip":
            # `for logp, r in zip(log_probs, rewards)`: each position from its own list, and
            # numbers from `range(n)` (`zip(range(n_agents), log_pis, critic_rets)`)
            lists = [
                EMPTY if self._counts(a) else self._listed_value(a, env) for a in iterated.args
            ]
            if iterated.args and all(v is not None for v in lists):
                return tuple(v.graphs for v in lists)
            return None
        value = self._listed_value(iterated, env)
        return value.item_parts if value is not None and value.graphs == items.graphs else None

    def _counts(self, node: ast.expr) -> bool:
        """`range(n)` or `itertools.count()`: items that are plain numbers."""
        return isinstance(node, ast.Call) and self.symbols.qualify(node.func) in COUNTERS

    def _listed_value(self, node: ast.expr, env: Env) -> Value | None:
        """The value of the list `node` walks (`reversed(xs)`, `xs[::-1]`, `xs`), or None."""
        while True:
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
                node = node.value
            elif isinstance(node, ast.Call) and getattr(node.func, "id", "") in KEEP_ITEMS:
                if not node.args:
                    return None
                node = node.args[0]
            else:
                break
        key = self.key_for(node)
        return env.get(key) if key is not None else None

    def _indexed_by_loop(self, loop: ast.For | ast.AsyncFor) -> set[str]:
        """`self.log_probs` in `for t in reversed(range(len(self.rewards))): ...
        self.log_probs[t]`: lists the loop reads one element of per iteration, by its
        integer index."""
        counted = loop.iter
        while isinstance(counted, ast.Call) and getattr(counted.func, "id", "") == "reversed":
            counted = counted.args[0] if counted.args else None
        is_range = isinstance(counted, ast.Call) and getattr(counted.func, "id", "") == "range"
        if not is_range or not isinstance(loop.target, ast.Name):
            return set()
        indexed = self._indexed.get(id(loop))
        if indexed is None:  # the syntax once per loop; what it names depends on the frame
            indexed = self._indexed[id(loop)] = kept_fact(
                self.kept, "indexed", loop, lambda: _indexed_reads(loop, loop.target.id)
            )
        return {key for value in indexed if (key := self.key_for(value)) is not None}

    def containers_iterated(self, loop: ast.AST) -> frozenset[str]:
        """The keys of the containers a `for` loop walks item by item: `self.data` in `for r,
        prob in self.data[::-1]`, both lists in `zip(rewards, log_probs)`, `xs` in
        `enumerate(reversed(xs))`."""
        if not isinstance(loop, ast.For | ast.AsyncFor):
            return frozenset()
        found, pending = set(self._indexed_by_loop(loop)), [loop.iter]
        while pending:
            node = pending.pop()
            if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
                pending.append(node.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                if node.func.id in ("zip", "enumerate", "reversed", "list", "tuple"):
                    pending += node.args[: None if node.func.id == "zip" else 1]
            elif (key := self.key_for(node)) is not None:
                found.add(key)
        return frozenset(found)

    def per_element_lists(self, env: Env) -> set[str]:
        """Lists of per-element results that the innermost loop walks without rebuilding
        (`outputs` in `for i in range(n): ... optimizers[i].step()`): a backward or a step of
        one element there leaves the other elements' graphs as they were."""
        if not self.element_loops or not self.element_loops[-1]:
            return set()
        written = self.written_stack[-1]
        return {
            name
            for name, value in env.items()
            if name not in written
            and not name.endswith(PEERS)
            and isinstance(value.shape, tuple)
            and value.shape[0] in ("seq", "vtuple")
        }

    def peer_view(self, key: str, node: ast.expr, env: Env) -> Value | None:
        """A read of a per-element list inside the loop over its elements that may take
        another element than this iteration's (`outputs[j]`, `outputs[1 - k]`, the whole
        `outputs`): the list as the earlier iterations' backwards and steps left it, kept
        under `key + PEERS` (deep mutual learning's peers, stepped before this peer's loss)."""
        if self.iterating or key + PEERS not in env or key not in self.per_element_lists(env):
            return None
        own = self.peer_index.get(key)
        index = node.slice if isinstance(node, ast.Subscript) else None
        if own is not None and isinstance(index, ast.Name) and index.id == own:
            return None  # this iteration's own element
        if env[key + PEERS].graphs:
            self.obs.peer_reads[id(node)] = node
            self.obs.peer_owners[id(node)] = own
        return env[key + PEERS]

    def iterate_elements(self, target: ast.expr, iterated: ast.expr, env: Env) -> None:
        """`for h in heads`, `for opt, loss in zip(opts, losses)`, `enumerate(heads)`: a target
        bound to an element of a container of modules is that element (`heads[*]`), so that
        optimizers and forwards built per element name the same modules."""
        pairs: list[tuple[ast.expr, ast.expr]] = [(target, iterated)]
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name):
            arguments = iterated.args
            elements = target.elts if isinstance(target, ast.Tuple) else []
            if iterated.func.id == "zip" and len(elements) == len(arguments):
                pairs = list(zip(elements, arguments, strict=True))
            elif iterated.func.id == "enumerate" and len(elements) == 2 and arguments:
                pairs = [(elements[1], arguments[0])]
        for element, container in pairs:
            source = self.key_for(container)
            if source is None or not isinstance(element, ast.Name):
                continue
            if shapes.is_module(shapes.item_shape(env.get(source, EMPTY).shape)):
                self.frame.aliases[element.id] = shapes.element_path(self.module_path(container))
                self.element_names.add(element.id)

    # ---------------------------------------------------------------- binding
    def bind(
        self, target: ast.expr, value: Value, env: Env, *, write: bool = True, exact: bool = True
    ) -> None:
        """Bind `target` to `value` in `env`; `exact=False`: an item store whose value is not
        the whole of what the item holds (`xs[i] += y`)."""
        if isinstance(target, ast.Tuple | ast.List):
            items = _item_shapes(value.shape, target.elts)
            count = len(target.elts)
            known = value.parts is not None and len(value.parts) == count
            inner = value.inner if known and value.inner is not None else (None,) * count
            for index, (element, shape) in enumerate(zip(target.elts, items, strict=True)):
                graphs = value.part(index, count)
                part = Value(graphs if known else self.item_graphs(graphs, index), shape)
                if inner[index] is not None:  # a record or tuple item: its own parts
                    part = Value(graphs, shape, inner[index])
                self.bind(element, part, env, write=write)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, value.with_shape(("seq", value.shape)), env, write=write)
        elif isinstance(target, ast.Subscript):
            self._bind_item(target, value, env, exact)
        else:
            if isinstance(target, ast.Name) and target.id in self.element_names:
                self.element_names.discard(target.id)  # no longer a container's element
                self.frame.aliases.pop(target.id, None)
            if isinstance(target, ast.Name) and self.leaves:
                self.leaves.discard(self.key_for(target))  # `_note_leaf`
            if isinstance(target, ast.Name) and target.id in self.frame.attribute_aliases:
                self.frame.attribute_aliases.discard(target.id)  # `_alias_attribute`
                self.frame.aliases.pop(target.id, None)
            key = self.key_for(target)
            if key is None:
                self.eval(target.value, env) if isinstance(target, ast.Attribute) else None
                return
            if key in self.slots.by_index:
                value = self.slots.rebound_index(key, value, env)
            env[key] = value
            env.pop(key + PEERS, None)  # a new list: no element of it was stepped yet
            below = (key + ".", key + "[")
            for held in [k for k in env if k.startswith(below)]:
                del env[held]  # another object: what the old one held is not this one's
            if write:
                self.note_write(key)

    def _bind_item(self, target: ast.Subscript, value: Value, env: Env, exact: bool = True) -> None:
        """`xs[i] = value`: the list holds it among its items; with `exact` (a plain store,
        not `xs[i] += ...`), a local list indexed by a name also keeps it as that item
        (`ItemSlots`)."""
        key = self.key_for(target.value)
        self.eval(target.slice, env)
        if key is None:
            return
        old = env[key] if key in env else self._unbound_attribute(target.value, env)
        env[key] = _with_item(old, value)
        self.note_write(key)
        self.slots.forget(key, env)  # another index may name the same item
        if (
            exact
            and self._own_local(target.value, key)
            and isinstance(target.slice, ast.Name)
            and self.slots.kept_alone(self.symbols.tree, target.value.id)
        ):
            self.slots.store(key, self.key_for(target.slice), value, env)
        caller_key = self._argument_stored_into(target.value)
        if caller_key is not None and caller_key in env:
            # the caller's list is the list the function was given
            env[caller_key] = _with_item(env[caller_key], value)
            self.note_write(caller_key)

    def _own_local(self, node: ast.expr, key: str) -> bool:
        """Whether `node` is a name of the running scope's own (not a parameter standing
        for the caller's object, nor a module global read from a function)."""
        return isinstance(node, ast.Name) and key == self.frame.prefix + node.id

    def _argument_stored_into(self, node: ast.expr) -> str | None:
        """The caller's key of the container a called function stores an item into through
        its parameter (`def fill(states, h): states[0] = h` called as `fill(states, h)`):
        Python passes the container itself. None for anything else, or when the function
        binds the parameter's name to something else."""
        if not isinstance(node, ast.Name) or self.frame.is_top or not self.call_stack:
            return None
        caller_key = self.frame.aliases.get(node.id)
        if caller_key is None or node.id in names_assigned_in(self.call_stack[-1]):
            return None
        return caller_key

    def _unbound_attribute(self, node: ast.expr, env: Env) -> Value:
        """What an attribute not bound here holds before an item is stored into it: a NumPy
        array as the instance's `__init__` left it (`self.v_buf = np.zeros(n)` in a rollout
        buffer whose `add` method stores into it), else nothing known."""
        if isinstance(node, ast.Attribute) and self.eval(node, env).shape == shapes.NUMPY_ARRAY:
            return EMPTY.with_shape(shapes.NUMPY_ARRAY)
        return EMPTY

    def clear(self, node: ast.expr, env: Env) -> None:
        """`x.detach_()`: x, or the container x was taken from, no longer holds graph."""
        while isinstance(node, ast.Subscript):
            node = node.value
        key = self.key_for(node)
        for target in self._changed_in_place(key, self.iterated_from.get(key)):
            if target in env:
                env[target] = Value(frozenset(), env[target].shape)
                self.note_write(target)

    def _changed_in_place(self, *keys: str | None) -> list[str]:
        """`keys` and, for a parameter of the running function, the caller's variable it was
        given (the same object, changed in place: `for s in state: s.detach_()` in a helper
        `detach_(state)` detaches the caller's state)."""
        found = [key for key in keys if key is not None]
        return found + [g for key in found if (g := self.frame.given_key(key)) is not None]

    # ---------------------------------------------------------------- expressions

    # ---------------------------------------------------------------- calls

    # ---------------------------------------------------------------- backward


def _with_item(container: Value, item: Value) -> Value:
    """`container` once `item` is stored into one of its positions. An item replaced by a
    graph-free value is taken to be detached in place (`hidden[i] = hidden[i].detach()` in a
    loop over all items): precision first. NumPy stores a number (`buf[t] = critic(obs[t])`
    into an array of numbers)."""
    graphs = container.graphs | item.graphs if item.graphs else frozenset()
    if container.shape == shapes.NUMPY_ARRAY:
        graphs = frozenset()
    return Value(graphs, container.shape)


# callees that only walk what they are given: a loop over their result reads its arguments'
# current values in each iteration (a list the body grows is seen grown)
_WALKERS = frozenset(
    {
        "enumerate",
        "zip",
        "reversed",
        "range",
        "sorted",
        "list",
        "tuple",
        "iter",
        "len",
        "map",
        "filter",
        "tqdm",
        "trange",
        "items",
        "keys",
        "values",
    }
)


def _named_builders(expr: ast.expr, prefix: str, named: list) -> ast.expr:
    """`expr` with each part that calls something building items (not one of `_WALKERS`)
    replaced by a name (`prefix` and a number), recorded in `named` with the part."""
    if isinstance(expr, ast.Lambda | ast.GeneratorExp):
        return expr  # its calls run per item, in the iterations
    if isinstance(expr, ast.Starred):
        value = _named_builders(expr.value, prefix, named)
        return (
            expr if value is expr.value else ast.copy_location(ast.Starred(value, expr.ctx), expr)
        )
    if isinstance(expr, ast.Call) and _callee_name(expr.func) in _WALKERS:
        args = [_named_builders(a, prefix, named) for a in expr.args]
        keywords = [
            ast.keyword(arg=k.arg, value=_named_builders(k.value, prefix, named))
            for k in expr.keywords
        ]
        return ast.copy_location(ast.Call(func=expr.func, args=args, keywords=keywords), expr)
    builds = any(
        isinstance(node, ast.Call) and _callee_name(node.func) not in _WALKERS
        for node in walk(expr)
    )
    if not builds:
        return expr
    name = ast.copy_location(ast.Name(id=f"{prefix}{len(named)}", ctx=ast.Load()), expr)
    named.append((name, expr))
    return name


# tensor methods whose result is pieces of the one tensor they are called on
_SPLITTERS = frozenset({"split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit"})


def _splits_a_tensor(call: ast.expr) -> bool:
    """`net(x).split(4)`, `out.unbind(0)`: the pieces share the tensor's graph."""
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in _SPLITTERS
    )


def _without(flow: Flow, keys: set) -> Flow:
    """`flow` with `keys` gone from each of its environments."""
    envs = (flow.normal, flow.continues, flow.breaks, flow.returns)
    kept = [None if e is None else {k: v for k, v in e.items() if k not in keys} for e in envs]
    return Flow(*kept, flow.returned)


def _callee_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def cross(
    env: Env, loop_id: int, written: set[str], enclosing: tuple[int, ...], before_loop: set
) -> Env:
    """Relabel the graphs of every variable assigned in the loop as they cross its back-edge,
    except the pieces that existed before the loop (`before_loop`: their keys)."""
    crossed = dict(env)
    for key in written:
        value = crossed.get(key)
        if value is not None and value.graphs:
            crossed[key] = value.map_graphs(
                lambda g, k=key: g if g.key in before_loop else g.carry(loop_id, k, enclosing)
            )
    return crossed


def _item_shapes(shape, elements: list[ast.expr]) -> list:
    # unpacking `None` raises: past the statement, a value that may be None was not
    # (`build_models()` returning early without models on a path that then fails)
    shape = shapes.present(shape)
    starred = any(isinstance(e, ast.Starred) for e in elements)
    if (
        isinstance(shape, tuple)
        and shape[0] == "tuple"
        and not starred
        and (len(shape[1]) == len(elements))
    ):
        return list(shape[1])
    return [shapes.item_shape(shape)] * len(elements)


def _element_index(loop: ast.AST) -> str | None:
    """`k` in `for k in range(n)` and `for k, x in enumerate(xs)`."""
    if not isinstance(loop, ast.For | ast.AsyncFor) or not isinstance(loop.iter, ast.Call):
        return None
    function, target = dotted_name(loop.iter.func), loop.target
    if function == "range" and isinstance(target, ast.Name):
        return target.id
    if function == "enumerate" and isinstance(target, ast.Tuple) and target.elts:
        first = target.elts[0]
        return first.id if isinstance(first, ast.Name) else None
    return None


def _compared(value: object, op: ast.cmpop, right: ast.expr) -> bool | None:
    """`value <op> right` for a literal `right` (a tuple, list or set of literals for `in`)."""
    if isinstance(op, ast.In | ast.NotIn):
        if not isinstance(right, ast.Tuple | ast.List | ast.Set):
            return None
        choices = [literal_value(e) for e in right.elts]
        if NOT_CONSTANT in choices:
            return None
        return (value in choices) is isinstance(op, ast.In)
    other = literal_value(right)
    if other is NOT_CONSTANT:
        return None
    if isinstance(op, ast.Eq | ast.NotEq):
        return (value == other) is isinstance(op, ast.Eq)
    if isinstance(op, ast.Is | ast.IsNot) and other is None:
        return (value is None) is isinstance(op, ast.Is)
    return None


def exclusive_ifs(statements: list[ast.stmt], position: int) -> int:
    """How many `if` statements from `position` on (at least two, else 0) test one subject
    against constants no two of them share, with no `else` and none of them assigning it:
    `if task == "semantic": ...` then `if task == "depth": ...`, as multi-task trainers
    write one branch per task. At most one of them runs, as in an `elif` chain."""
    subject, seen = None, set()
    end = position
    while end < len(statements):
        statement = statements[end]
        if not isinstance(statement, ast.If) or statement.orelse:
            break
        tested = tested_constants(statement.test)
        if tested is None or (subject is not None and tested[0] != subject):
            break
        root = tested[0].split(".")[0].split("[")[0]
        if tested[1] & seen or root in names_assigned_in(statement):
            break
        if _stores_to(statement, tested[0]):  # `opt.task = "depth"` in a block
            break
        subject = tested[0]
        seen |= tested[1]
        end += 1
    return end - position if end - position >= 2 else 0


# the words a scope that runs a backward says (`loss.backward()`, `self.manual_backward(loss)`)
BACKWARD_WORDS = frozenset({"backward", "manual_backward"})
# what `isinstance(x, T)` tests as "a tensor": `torch.autograd.Variable` is `torch.Tensor`'s
# alias since PyTorch 0.4 (its `__instancecheck__` accepts every tensor)
TENSOR_TYPES = frozenset(
    {"torch.Tensor", "torch.autograd.Variable", "torch.autograd.variable.Variable"}
)


def _setting_subject(test: ast.expr) -> str | None:
    """`args.cell` for `args.cell == "lstm"` or `args.cell in ("gru", "rnn")`: an attribute
    (a setting, not a plain local) compared with constants."""
    tested = tested_constants(test, (ast.Eq, ast.In, ast.Is))
    if tested is None or not isinstance(test.left, ast.Attribute):
        return None
    return tested[0]


def _stores_to(loop: ast.AST, dotted: str) -> bool:
    """Whether the loop assigns the attribute `dotted` (`args.cell = ...`)."""
    return any(
        isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and dotted_name(node) == dotted
        for node in walk(loop)
    )


def _indexed_reads(loop: ast.For | ast.AsyncFor, index: str) -> list[ast.expr]:
    """What the loop's body subscripts with its index (`xs` in `xs[t]`)."""
    return [
        node.value
        for statement in loop.body
        for node in walk(statement)
        if isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Name)
        and node.slice.id == index
    ]


def _named_item(item: ast.expr) -> bool:
    """A name, an attribute path, or one read by position (`opts[0]`)."""
    if isinstance(item, ast.Subscript) and isinstance(item.slice, ast.Constant):
        item = item.value
    return isinstance(item, ast.Name | ast.Attribute)


def _calls_on_paths(bodies: tuple[ast.AST, ...]) -> tuple[tuple[str, ast.expr], ...]:
    """The calls in `bodies` of an attribute of an object other than `self`
    (`self.master.avg_model(x)`, `agent.net(x)`): each as its dotted path, with the
    expression of the object it is read from (`self.master`), once per path."""
    found: dict[str, ast.expr] = {}
    for body in bodies:
        for node in walk(body):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            path = dotted_name(node.func)
            if path is not None and dotted_name(node.func.value) != "self":
                found.setdefault(path, node.func.value)
    return tuple(found.items())


def _method_receivers(loop: ast.AST) -> tuple[str, ...]:
    """The plain names the loop calls a method on (`model` in `model.update(x)`), other than
    `self` and those it assigns (an object made anew each iteration)."""
    assigned = names_assigned_in(loop)
    target = getattr(loop, "target", None)  # `for agent in agents:`: one per iteration
    assigned |= {n.id for n in walk(target) if isinstance(n, ast.Name)} if target else set()
    names = {
        node.func.value.id
        for node in walk(loop)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
    }
    return tuple(sorted(names - assigned - {"self"}))


def _loop_carried_names(loop: ast.AST) -> set[str]:
    """Names a loop's body reads before it assigns them (`h` in `out, h = cell(x, h)`): what
    one iteration hands the next. Not a list only appended to, nor a name set before use; a
    name set only under a condition (`if t == 0: baseline = critic(s)`) is handed on by the
    iterations that skip it."""
    assigned: set[str] = set()
    carried: set[str] = set()
    in_loop = names_assigned_in(loop)
    for statement in loop.body:
        carried |= (_graph_loads(statement) - assigned) & in_loop
        if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Expr):
            assigned |= {n.id for n in walk(statement) if isinstance(n, ast.Name)
                         and isinstance(n.ctx, ast.Store)}  # fmt: skip
    return carried


def _graph_loads(node: ast.AST) -> set[str]:
    """Names read for their graph: not as `h.detach()`, `h.data` or `h.item()`."""
    if isinstance(node, ast.Attribute) and node.attr in ("detach", "data", "item"):
        return set()
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    return set().union(*(_graph_loads(child) for child in child_nodes(node)))


# calls whose items are plain numbers
COUNTERS = frozenset({"range", "itertools.count"})


def _walks_elements(loop: ast.AST) -> bool:
    """`for i in range(n)`, `for x in xs`, `zip(...)`, `enumerate(...)`: a loop over items."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return False
    iterated = loop.iter
    if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Name):
        return iterated.func.id in ("range", "zip", "enumerate")
    return dotted_name(iterated) is not None


def _under(key: str, owner: str) -> bool:
    """`key` is the object at `owner` or something it holds (`meter.sum`, `meter.vals[*]`)."""
    return key == owner or key.startswith((owner + ".", owner + "["))


def _opens_body(function: FunctionNode, node: ast.Call) -> bool:
    """`node` is a whole statement of `function`'s own body (or an assignment's or return's
    value), or the whole body of an `if` there testing that its receiver exists (`if
    self.dis_scheduler is not None: self.dis_scheduler.step()`: it runs whenever there is
    one), and no statement before it may return or raise."""
    for statement in function.body:
        if isinstance(statement, ast.Expr | ast.Assign | ast.Return) and statement.value is node:
            return True
        if _guards_existence(statement, node):
            return True
        if any(isinstance(n, ast.Return | ast.Raise) for n in walk(statement)):
            return False
    return False


def _guards_existence(statement: ast.stmt, node: ast.Call) -> bool:
    """`if x is not None: x.step()` (or `if x: x.step()`), with nothing else in it."""
    if not (
        isinstance(statement, ast.If)
        and not statement.orelse
        and len(statement.body) == 1
        and isinstance(statement.body[0], ast.Expr)
        and statement.body[0].value is node
        and isinstance(node.func, ast.Attribute)
    ):
        return False
    test, receiver = statement.test, syntax_key(node.func.value)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        other = test.comparators[0]
        is_none = isinstance(other, ast.Constant) and other.value is None
        return isinstance(test.ops[0], ast.IsNot) and is_none and syntax_key(test.left) == receiver
    return syntax_key(test) == receiver


_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)


def _builds_exception(node: ast.expr | None) -> bool:
    """`NotImplementedError(...)`: a builtin exception made (and, returned, never raised)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
        return False
    return node.func.id in _EXCEPTIONS


def _constructed_with(cls: ClassInfo, argument, modules: list[Symbols]) -> object:
    """The literal every construction of `cls` in `modules` passes for the `__init__`
    argument a setting is bound to (`StatefulGRU(3, 16, truncate=True)`), where each of them
    names the class only to call it and at least one constructs it; else `NOT_CONSTANT`."""
    found = []
    for module in modules:
        passed = module.constructions(cls.node, argument)
        if passed is None:
            return NOT_CONSTANT
        found += passed
    if not found or any(type(v) is not type(found[0]) or v != found[0] for v in found):
        return NOT_CONSTANT
    return found[0]


def _tuple_shape(shape) -> bool:
    """A tuple of known arity, a tuple of any length, or a named tuple."""
    return isinstance(shape, tuple) and shape[:1] in (("tuple",), ("vtuple",), ("record",))


def _names_builtin(node: ast.expr, name: str) -> bool:
    """`tuple`, or `(tuple, list)` (`name` among builtin containers only), as written in an
    `isinstance` test."""
    if isinstance(node, ast.Tuple):
        names = [e.id if isinstance(e, ast.Name) else None for e in node.elts]
        return name in names and set(names) <= {"tuple", "list"}
    return isinstance(node, ast.Name) and node.id == name
