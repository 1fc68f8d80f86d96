"""What a loop's body knows from its counter: which iteration it is in.

Real training loops branch on the loop's own counter: `if t == 0: h = init_state()` at the
start of a decoder's timesteps, truncated BPTT as `if t % k == 0: h = h.detach()` with the
backward under `if (t + 1) % k == 0:`, an update every other iteration under `if it % 2 == 0:`
at two places. Following both sides of each `if` independently of its condition, the loop
model would carry a state past the branch that resets it. Here the iterations of a loop over
`range(...)`, `reversed(range(...))` or `enumerate(...)` are told apart by a `Phase`: whether
it is the first one, the last one (where the body tests for it), and which of the residues
its body tests (`t % k == r`) the counter has. The interpreter runs the body once per
reachable phase, each `if` on the counter takes only the side its phase decides, and only a
last iteration leads out of the loop.

A modulus that is not a constant (`args.bptt`) is taken to be either 1 (a run where every
iteration is in every window, as `--accum-steps 1` makes it, is followed beside the others)
or larger than the spread of the residues tested and the counter's start (`t % k == 0` and
`t % k == k - 1` are different iterations); a modulus between the two (2 for residues 0 and
2) is not followed. A name the module binds once to an integer (`K = 5`) is that constant,
and a small constant modulus is followed residue by residue.
"""

from __future__ import annotations

import ast
import operator
from dataclasses import dataclass

from loopfix.model.index import walk
from loopfix.model.symbols import dotted_name

# a constant modulus up to this many residues is followed residue by residue
MAX_TRACKED_RESIDUES = 16


@dataclass(frozen=True)
class Phase:
    """One kind of iteration: the first or a later one, the counter's residue among those
    the body tests (None: none of them), and whether it is the last."""

    first: bool
    residue: int | None
    last: bool = False  # the loop's last iteration (only where the body tests for it)
    # a run where a modulus that is not a constant is 1 (`--accum-steps 1`): every iteration
    # is in every window, and each periodic test reads its value at k == 1
    unit: bool = False


@dataclass(frozen=True)
class Counter:
    """A loop's counter and the tests its body makes of it.

    `index` counts up by one from `start`; `modulus` is the source of the one modulus its
    periodic tests use (`"k"`, `"args.bptt"`, `"2"`), `residues` the residues they test;
    `end` the source of the bound the index stays below (`"n"` for `range(n)`,
    `"len(chunks)"` for `enumerate(chunks)`) where the body tests for the last iteration.
    """

    index: str
    start: int
    modulus: str | None
    residues: frozenset[int]
    end: str | None = None
    constant: int | None = None  # the modulus's value, where it is a known constant
    # `reversed(range(n))`: the counter counts down from `top - 1` (`top` is `"n"`) to
    # `start`, so `t == n - 1` is the first iteration and `t == 0` the last
    descending: bool = False
    top: str | None = None
    # how many iterations run, where `range`'s bounds are integers and no residue or unit run
    # is told apart: the phases know which iteration is the last (`for i in range(2):` with
    # `if i == 0:` runs its other branch once, and then the loop ends)
    count: int | None = None

    @property
    def knows_last(self) -> bool:
        """Whether phases tell the last iteration apart (only it leads out of the loop)."""
        return self.end is not None or self.count is not None

    def first_of(self, test: ast.expr) -> bool | None:
        """True when `test` holds exactly in the first iteration, False when exactly in the
        others, None otherwise."""
        if self.descending:
            return last_iteration_test(test, self.index, self.top) if self.top else None
        return first_iteration_test(test, self.index, self.start)

    def last_of(self, test: ast.expr) -> bool | None:
        """As `first_of`, for the last iteration (when the body tests for it)."""
        if self.end is None:
            return None
        if self.descending:
            return first_iteration_test(test, self.index, self.start)
        return last_iteration_test(test, self.index, self.end)

    def initial(self) -> Phase:
        return Phase(True, self._residue_of(self.start))

    def initials(self) -> list[Phase]:
        """The phases of the first iteration: also the last one when the body tests for
        it (a loop of one iteration), and the run with a modulus of 1."""
        unit = [Phase(True, None, unit=True)] if self._may_be_one() else []
        phases = self._with_last([self.initial(), *unit])
        if self.count is None:
            return phases
        return [p for p in phases if p.last == (self.count == 1)]

    def _may_be_one(self) -> bool:
        return self.modulus is not None and self.constant is None

    def successors(self, phase: Phase) -> list[Phase]:
        """The phases the iteration after one in `phase` can be in (none after the last)."""
        if phase.last:
            return []
        if self.count is not None:  # iteration 1 after the first, else one of 2..count-1
            later = self._with_last([Phase(False, None)])
            if phase.first:
                return [p for p in later if p.last == (self.count == 2)]
            return [p for p in later if p.last or self.count >= 4]
        if phase.unit:
            return self._with_last([Phase(False, None, unit=True)])
        if phase.residue is not None:
            following = [Phase(False, self._residue_of(phase.residue + 1))]
            if self._wraps_after(phase.residue):
                following.append(Phase(False, min(self.residues)))
            return self._with_last(following)
        untested = [r for r in self.residues if self._residue_of(r - 1) is None]
        return self._with_last([Phase(False, r) for r in sorted(untested)] + [Phase(False, None)])

    def _with_last(self, phases: list[Phase]) -> list[Phase]:
        if not self.knows_last:
            return phases
        return [Phase(p.first, p.residue, last, p.unit) for p in phases for last in (False, True)]

    def _wraps_after(self, residue: int) -> bool:
        """Whether, for a modulus that is not a constant, the lowest tested residue may come
        right after `residue`: only after the highest, when the modulus is one more than the
        spread of the tested residues (`t % k == 0` right after `t % k == k - 1`... and
        `t % k == k - 1` right after `t % k == 0` when k == 2)."""
        if self.constant is not None or len(self.residues) < 2:
            return False
        return residue == max(self.residues) and residue + 1 not in self.residues

    def holds(self, test: ast.expr, phase: Phase) -> bool | None:
        """The value of `test` in an iteration in `phase`, or None when the phase does not
        decide it."""
        first = self.first_of(test)
        if first is not None:
            return first == phase.first
        last = self.last_of(test)
        if last is not None:
            return last == phase.last
        periodic = self.periodic_value(test, phase)
        if periodic is not None:
            return periodic
        compared = self._compared(test, phase)
        if compared is not None:
            return compared
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.holds(test.operand, phase)
            return None if inner is None else not inner
        if isinstance(test, ast.BoolOp):  # three-valued: `t % k == 0 and t > 0`
            values = [self.holds(value, phase) for value in test.values]
            decisive = isinstance(test.op, ast.Or)  # the value that decides alone
            if decisive in values:
                return decisive
            return None if None in values else not decisive
        return None

    def _compared(self, test: ast.expr, phase: Phase) -> bool | None:
        """The value of `i < 3` (`<`, `<=`, `>`, `>=`, `==`, `!=` with an integer) in
        `phase`, for a loop of known length: the first iteration's index is the start, the
        last's the start plus the count less one, the others' lie between."""
        found = _integer_comparison(test, self.index)
        if found is None or self.count is None or phase.unit or phase.residue is not None:
            return None
        operation, limit = found
        low, high = self.start, self.start + self.count - 1
        if self.descending:  # the first iteration is the top one
            low, high = high, low
        if phase.first or phase.last:
            value = low if phase.first else high
            return operation(value, limit)
        low, high = min(low, high) + 1, max(low, high) - 1
        if low > high:
            return None
        if operation in (operator.eq, operator.ne):
            if low == high == limit:
                return operation is operator.eq
            inside = low <= limit <= high
            return None if inside else operation is operator.ne
        outcomes = {operation(low, limit), operation(high, limit)}
        return outcomes.pop() if len(outcomes) == 1 else None

    def periodic_value(self, test: ast.expr, phase: Phase) -> bool | None:
        """The value of `(t + b) % k == c` (or `!=`, or the truth of `(t + b) % k`) in
        `phase`; None for other tests or another modulus."""
        found = _periodic(test, self.index)
        if found is None or found.modulus != self.modulus:
            return None
        if phase.unit:  # k == 1: (t + b) % 1 is 0
            return (found.value_at(1) == 0) == found.equal
        residue = self.residue_tested(found)
        return (residue is not None and phase.residue == residue) == found.equal

    def residue_tested(self, found: PeriodicTest) -> int | None:
        """The residue of t the test compares with (None: a value `% k` never takes)."""
        if self.constant is None:
            return found.value_relative() - found.shift
        value = found.value_at(self.constant)
        return (value - found.shift) % self.constant if 0 <= value < self.constant else None

    def _normal(self, residue: int) -> int:
        return residue % self.constant if self.constant else residue

    def _residue_of(self, value: int) -> int | None:
        value = self._normal(value)
        return value if value in self.residues else None


def loop_counter(loop: ast.AST, value_of=lambda name: None) -> Counter | None:
    """The counter of a `for` loop over `range(...)`, `reversed(range(...))` or
    `enumerate(...)` whose body tests it (first iteration, last iteration or, counting up, a
    residue), else None. The counter must not be assigned in the body, and its periodic
    tests must share one modulus. `value_of(name)`
    gives the value of a modulus that is a name bound once to an integer (`k = 1`)."""
    if not isinstance(loop, ast.For | ast.AsyncFor) or not isinstance(loop.iter, ast.Call):
        return None
    descending = dotted_name(loop.iter.func) == "reversed" and len(loop.iter.args) == 1
    counted = loop.iter.args[0] if descending else loop.iter
    start = _first_index_value(counted)
    if start is None or (descending and dotted_name(counted.func) != "range"):
        return None
    index = _counter_name(loop)
    tests = [node.test for node in walk(loop) if isinstance(node, ast.If | ast.IfExp)]
    if index is None or not tests:
        return None
    assigned = names_assigned_in(loop)
    if index in assigned:
        return None
    top = _end_of(counted)
    if top is not None and _names_in(top) & assigned:
        top = None
    probe = Counter(index, start, None, frozenset(), top, None, descending, top)
    testing = [
        test
        for test in tests
        if _mentions(probe.first_of, test)
        or (_periodic_parts(test, index) and not descending)
        or _mentions(probe.last_of, test)
    ]
    if len(testing) < 2:
        # one test of the counter: phases only tell apart what a whole first or last test
        # decides (`if t == 0: h = init`); a lone periodic test (`if i % 100 == 0: log`)
        # splits nothing that the ordinary join would not give, at a multiple of the cost,
        # unless its modulus is 1 (`if i % 1 == 0: h = init`): it holds in every iteration
        testing = [
            test
            for test in testing
            if probe.first_of(test) is not None
            or probe.last_of(test) is not None
            or _always_periodic(test, index)
        ]
    first_tested = any(_mentions(probe.first_of, test) for test in testing)
    end = top if any(_mentions(probe.last_of, test) for test in testing) else None
    # a step other than 1 (`range(0, n, bptt)`) leaves the first iteration's tests only:
    # the first value is the start, and every later one is above it, whatever the step
    stepped = len(counted.args) == 3 and int_constant(counted.args[2]) != 1
    periodic = [p for t in testing for p in _periodic_parts(t, index)]
    periodic = [] if descending or stepped else periodic
    moduli = {p.modulus for p in periodic}
    if len(moduli) > 1 or (moduli and assigned & _names_in(next(iter(moduli)))):
        periodic, moduli = [], set()
    # `if i <= 2:` in `for i in range(4):`: a comparison with an integer that the phases of
    # a loop of known length decide
    compared = not periodic and any(_integer_comparison(t, index) for t in tests)
    compared = compared and _iterations(counted, start) is not None
    if not first_tested and not periodic and end is None and not compared:
        return None
    modulus = next(iter(moduli)) if moduli else None
    constant = _constant_modulus(modulus)
    if modulus is not None and constant is None:
        given = value_of(modulus)
        constant = given if isinstance(given, int) and given > 0 else None
    counter = Counter(index, start, modulus, frozenset(), end, constant, descending, top)
    tested = {counter.residue_tested(p) for p in periodic} - {None}
    if constant is not None and constant <= MAX_TRACKED_RESIDUES and len(tested) > 1:
        # tests of several residues of a small constant modulus (`t % 5 == 0`, `t % 5 == 4`):
        # every residue is a phase, so that the count between them is exact
        tested = set(range(constant))
    count = _iterations(counted, start) if not tested and modulus is None else None
    return Counter(index, start, modulus, frozenset(tested), end, constant, descending, top, count)


_COMPARISONS = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


def _integer_comparison(test: ast.expr, index: str) -> tuple | None:
    """(`operator.lt`, 3) for `i < 3` with `i` the counter, else None."""
    if not (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.left, ast.Name)
        and test.left.id == index
        and type(test.ops[0]) in _COMPARISONS
    ):
        return None
    limit = int_constant(test.comparators[0])
    return None if limit is None else (_COMPARISONS[type(test.ops[0])], limit)


def _iterations(counted: ast.Call, start: int) -> int | None:
    """How many times `range(n)` or `range(a, n)` runs, for integers (None: not known, or
    none)."""
    if dotted_name(counted.func) != "range" or len(counted.args) not in (1, 2):
        return None
    top = int_constant(counted.args[-1])
    return top - start if top is not None and top > start else None


def first_iteration_test(test: ast.expr, index: str, start: int) -> bool | None:
    """True when `test` holds exactly in the first iteration of a loop whose `index` counts up
    from `start` (`t == 0`, `not t`, `t < 1`), False when it holds exactly in the later ones
    (`t > 0`, `t != 0`, `t >= 1`, `t`), None otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = first_iteration_test(test.operand, index, start)
        return None if inner is None else not inner
    if isinstance(test, ast.Name) and test.id == index:
        return False if start == 0 else None  # `if t:`
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if isinstance(right, ast.Name) and right.id == index:  # `0 == t` -> `t == 0`
        left, right = right, left
        op = _MIRRORED.get(type(op), op)
    bound = int_constant(right)
    if not (isinstance(left, ast.Name) and left.id == index) or bound is None:
        return None
    first_only = {ast.Eq: bound == start, ast.LtE: bound == start, ast.Lt: bound == start + 1}
    later_only = {ast.NotEq: bound == start, ast.Gt: bound == start, ast.GtE: bound == start + 1}
    if first_only.get(type(op)):
        return True
    if later_only.get(type(op)):
        return False
    return None


_MIRRORED = {ast.Lt: ast.Gt(), ast.Gt: ast.Lt(), ast.LtE: ast.GtE(), ast.GtE: ast.LtE()}


def last_iteration_test(test: ast.expr, index: str, end: str) -> bool | None:
    """True when `test` holds exactly in the last iteration of a loop whose `index` stays
    below `end` (`t == n - 1`, `t + 1 == n`, `t >= n - 1`), False when it holds exactly in
    the others (`t != n - 1`, `t < n - 1`, `t + 1 < n`), None otherwise."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = last_iteration_test(test.operand, index, end)
        return None if inner is None else not inner
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if _shift_of(right, index) is not None and _shift_of(left, index) is None:
        left, right = right, left
        op = _MIRRORED.get(type(op), op)
    shift = _shift_of(left, index)  # `t + shift` against `right`
    bound = _bound_offset(right, end)  # `right` is `end + bound`
    if shift is None or bound is None:
        return None
    gap = bound - shift  # the test compares t with end + gap; the last t is end - 1
    if gap == -1 and isinstance(op, ast.Eq | ast.GtE):
        return True
    if gap == 0 and isinstance(op, ast.Gt):
        return None  # never holds
    if gap == -1 and isinstance(op, ast.NotEq | ast.Lt):
        return False
    if gap == 0 and isinstance(op, ast.Lt):
        return None  # always holds
    if gap == -2 and isinstance(op, ast.Gt):
        return True
    if gap == -2 and isinstance(op, ast.LtE):
        return False
    return None


def _bound_offset(node: ast.expr, end: str) -> int | None:
    """b for `end + b` (`n - 1` -> -1, `n` -> 0)."""
    if ast.unparse(node) == end:
        return 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        constant = int_constant(node.right)
        if constant is not None and ast.unparse(node.left) == end:
            return constant if isinstance(node.op, ast.Add) else -constant
    return None


def _end_of(call: ast.Call) -> str | None:
    """The bound the counter stays below: `n` of `range(n)` or `range(a, n)`, `len(xs)` of
    `enumerate(xs)` (counting from 0)."""
    function = dotted_name(call.func)
    if function == "range" and len(call.args) in (1, 2):
        return ast.unparse(call.args[-1])
    if function == "enumerate" and len(call.args) == 1 and not call.keywords:
        return f"len({ast.unparse(call.args[0])})"
    return None


def _mentions(edge_test, test: ast.expr) -> bool:
    """Whether `edge_test` (first or last iteration) decides the test or one of its parts."""
    return any(edge_test(part) is not None for part in _test_parts(test))


def _always_periodic(test: ast.expr, index: str) -> bool:
    """`(t + b) % 1 == 0` (or `!=`): every integer is a multiple of 1, so the test has one
    value in every iteration."""
    found = _periodic(test, index)
    return found is not None and found.modulus == "1"


def _periodic_parts(test: ast.expr, index: str) -> list[PeriodicTest]:
    return [p for part in _test_parts(test) if (p := _periodic(part, index)) is not None]


def _test_parts(test: ast.expr) -> list[ast.expr]:
    """The test and the operands of its `and`/`or`/`not`: where a counter test can sit."""
    if isinstance(test, ast.BoolOp):
        return [test] + [p for value in test.values for p in _test_parts(value)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return [test] + _test_parts(test.operand)
    return [test]


@dataclass(frozen=True)
class PeriodicTest:
    """`(t + shift) % modulus == c` (`equal`) or `!=` (not `equal`), where c is `literal` or
    `modulus - below`."""

    modulus: str
    shift: int
    literal: int | None
    below: int | None
    equal: bool

    def value_at(self, modulus: int) -> int:
        """c for a modulus of this value."""
        return self.literal if self.literal is not None else modulus - self.below

    def value_relative(self) -> int:
        """c as an offset from a multiple of the modulus (`k - 1` -> -1)."""
        return self.literal if self.literal is not None else -self.below


def _periodic(test: ast.expr, index: str) -> PeriodicTest | None:
    """The periodic test `test` makes of the counter: `(t + b) % k == c`, `t % k != c`, or the
    truth of `t % k` (`!= 0`); `c` a constant or `k - d`."""
    if isinstance(test, ast.BinOp) and isinstance(test.op, ast.Mod):
        found = _modulo(test, index)  # `if (t + b) % k:` holds unless (t + b) % k == 0
        return None if found is None else PeriodicTest(found[0], found[1], 0, None, False)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    if not isinstance(test.ops[0], ast.Eq | ast.NotEq):
        return None
    left, right = test.left, test.comparators[0]
    if not (isinstance(left, ast.BinOp) and isinstance(left.op, ast.Mod)):
        left, right = right, left
    found = _modulo(left, index) if isinstance(left, ast.BinOp) else None
    if found is None:
        return None
    modulus, shift = found
    equal = isinstance(test.ops[0], ast.Eq)
    literal = int_constant(right)
    if literal is not None:
        return PeriodicTest(modulus, shift, literal, None, equal)
    below = _below_modulus(right, modulus)
    return None if below is None else PeriodicTest(modulus, shift, None, below, equal)


def _modulo(node: ast.BinOp, index: str) -> tuple[str, int] | None:
    """(modulus source, b) for `(t + b) % k`."""
    if not isinstance(node.op, ast.Mod):
        return None
    shift = _shift_of(node.left, index)
    if shift is None:
        return None
    if not (dotted_name(node.right) or int_constant(node.right) is not None):
        return None
    return ast.unparse(node.right), shift


def _shift_of(node: ast.expr, index: str) -> int | None:
    """b for `t`, `t + b`, `b + t`, `t - b`."""
    if isinstance(node, ast.Name) and node.id == index:
        return 0
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        left, right = node.left, node.right
        if isinstance(left, ast.Name) and left.id == index and int_constant(right) is not None:
            return int_constant(right) * (1 if isinstance(node.op, ast.Add) else -1)
        if isinstance(node.op, ast.Add) and isinstance(right, ast.Name) and right.id == index:
            return int_constant(left)
    return None


def _below_modulus(node: ast.expr, modulus: str) -> int | None:
    """d for `k - d`, where `k` is the modulus."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.Sub)
        and ast.unparse(node.left) == modulus
        and int_constant(node.right) is not None
    ):
        return int_constant(node.right)
    return None


def _constant_modulus(modulus: str | None) -> int | None:
    return int(modulus) if modulus is not None and modulus.isdigit() and int(modulus) else None


def _first_index_value(call: ast.expr) -> int | None:
    """0 for `range(n)` and `enumerate(xs)`; `a` for `range(a, n)`, `range(a, n, s)` and
    `enumerate(xs, a)`; None for a start that is not a constant, or a step that is neither a
    positive constant nor a name (`range(0, n, args.bptt)`: a stride, taken as positive)."""
    if not isinstance(call, ast.Call):
        return None
    function = dotted_name(call.func)
    if function == "range" and 1 <= len(call.args) <= 3 and not call.keywords:
        step = call.args[2] if len(call.args) == 3 else None
        constant = int_constant(step) if step is not None else 1
        if constant is None and dotted_name(step) is None:
            return None  # a step computed (`2 * k`): its sign is not known
        if constant is not None and constant < 1:
            return None
        return 0 if len(call.args) == 1 else int_constant(call.args[0])
    if function == "enumerate":
        given = call.args[1:] + [k.value for k in call.keywords if k.arg == "start"]
        return int_constant(given[0]) if given else 0
    return None


def _counter_name(loop: ast.For | ast.AsyncFor) -> str | None:
    """`t` in `for t in range(n)` and `for t, x in enumerate(xs)`."""
    target = loop.target
    if isinstance(target, ast.Tuple) and target.elts:
        if dotted_name(loop.iter.func) != "enumerate":
            return None
        target = target.elts[0]
    return target.id if isinstance(target, ast.Name) else None


def int_constant(node: ast.expr) -> int | None:
    """The integer `node` is written as (`3`, `-1`), or None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) is int
    ):
        return -node.operand.value
    return None


def names_assigned_in(loop: ast.AST) -> set[str]:
    """Names the loop's body stores to."""
    return {
        n.id
        for statement in loop.body
        for n in walk(statement)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }


def _names_in(source: str) -> set[str]:
    try:
        tree = ast.parse(source, mode="eval")
    except SyntaxError:
        return set()
    return {n.id for n in walk(tree) if isinstance(n, ast.Name)}


def entered(loop: ast.While, earlier: list[ast.stmt]) -> bool:
    """Whether a `while` loop's test holds when it is first reached: a comparison of
    integers (`n < warm`) whose names the statements `earlier` in its block bind to integer
    literals (`n = 0`, `warm = 2`), none of them bound again after that. A name from
    elsewhere (`args.warmup`) may make it false: the body may not run."""
    test = loop.test
    if isinstance(test, ast.Constant):  # `while True:`, left by a `break`
        return bool(test.value)
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    operation = _COMPARISONS.get(type(test.ops[0]))
    left = _entry_value(test.left, earlier)
    right = _entry_value(test.comparators[0], earlier)
    return operation is not None and None not in (left, right) and operation(left, right)


def _entry_value(node: ast.expr, earlier: list[ast.stmt]) -> int | None:
    """An integer literal, or a name whose last binding in `earlier` is one and stands."""
    if int_constant(node) is not None or not isinstance(node, ast.Name):
        return int_constant(node)
    for position in range(len(earlier) - 1, -1, -1):
        statement = earlier[position]
        stored = (n for n in walk(statement) if isinstance(n, ast.Name))
        if not any(n.id == node.id and isinstance(n.ctx, ast.Store) for n in stored):
            continue
        single = isinstance(statement, ast.Assign) and len(statement.targets) == 1
        if single and isinstance(statement.targets[0], ast.Name):
            return int_constant(statement.value)
        return None  # bound otherwise (`n += 1`, in a loop or a branch): not known
    return None
