"""Run a training script in this (child) process and record what autograd computed.

    python -m loopfix.verify.trace [--defer-steps | --retain-graphs | --clone-saved] [--graphs]
                                   [--iterations N] [--device D] TRACE_FILE SCRIPT [ARGS...]

Records, in order, every backward pass (the loss value, the gradient of every parameter of
every module that has run so far, in the order the modules first ran, the line of the user's
code that called it, the indices of the parameters whose gradient it added to, whether all of
them started from nothing, and which did) and every optimizer step (the gradient of every
parameter the optimizer owns, just before it steps, and those parameters' indices), up to
`MAX_EVENTS`; the output of every outermost module forward (`trace["forwards"]`, up to
`MAX_FORWARDS`); and the error the script raised if any. The trace is saved with
`portable.save` (JSON) even when the script fails, so the events before the failure can be compared
with a patched script's.
`--call FUNCTION --fixture FIXTURES_FILE` runs a function unit instead of the script: the
script is loaded as a module (its `__main__` block does not run), `fixture_FUNCTION(module)` (or
`fixture_FUNCTION()`) from the fixtures file builds `(args, kwargs)` after seeding (`module` is
the loaded unit itself, so the model is built from the code under test), and
`FUNCTION(*args, **kwargs)` runs under the same recording (`Class.method` units take
`(instance, args, kwargs)` from `fixture_Class_method()`).

`--call FUNCTION` without `--fixture` calls it with arguments the harness builds
(`replica.py`): stand-in models, optimizer, loss and data where the code takes them as
parameters; the trace then says `replica`.

`--synthetic-loop LINE` runs the unit with synthetic data for the loop on LINE (at the top of
the module, of its `__main__` block, or of a function; see `synthetic.py`), for code whose data
is not on this machine.

A worker process of the user's code (`mp.Process(target=train, ...)`, a `Process` subclass's
own `run()`) runs in this process when started, workers one after the other, so that its
backwards and steps are recorded (`WorkersHere`; `trace["workers_here"]` counts them).

`--iterations N` stops the run (as a success, marked "capped") when the first optimizer is about
to step for the (N+1)th time, or at the (N+1)th backward when nothing steps (the (8N+1)th when an
optimizer exists that has not stepped yet: gradient accumulation). `--device auto`
picks CUDA, then MPS, then CPU, and makes it torch's default device for the script. On a
machine whose torch has no CUDA, a run on the CPU makes `.cuda()` of a tensor or a module leave
it on the CPU (code written for one GPU calls it unconditionally; the original and the patched
run both do, so they stay comparable), and the trace says so (`cuda_on_cpu`).

With `--defer-steps` the run is instrumented, not changed: every optimizer step records the
gradients it would step with and then leaves the parameters alone, and every backward keeps its
graph. The first step of each optimizer then shows exactly the gradients it would have stepped
with "if no parameter had changed during the iteration": the reference LF002/LF003 fixes are
judged against. Step events name their optimizer by the order in which optimizers first step.
With `--retain-graphs` every backward keeps its graph and the steps run: the original as it
would run had every backward been given `retain_graph=True` (what LF003's retain fix is judged
against). With `--clone-saved` every tensor autograd saves for a backward is copied when it is
saved (`torch.autograd.graph.saved_tensors_hooks`): the original as it would run had every
in-place operation been out-of-place, since a later in-place change can no longer reach what
the backward reads (what LF008's fix is judged against).

Each backward event also says whether the code asked to keep its graph (`retain_graph`, or
`create_graph`), and with `--graphs` which earlier backwards (numbered from 1) had gone through
some node of its graph: every node a backward goes through is marked in its metadata (leaves'
gradient accumulators left out). An expression of the original that the verifier wrapped in
`__loopfix_probe__(number, value)` is recorded in `trace["probes"]`: how often it was
evaluated, how often its value held a graph, and how often a graph some backward had already
gone through (the oracles' evidence that the bug a rule reports really happened).
This module imports torch and runs user code: it is only ever run in a child process.
"""

from __future__ import annotations

import builtins
import functools
import gc
import inspect
import os
import resource
import runpy
import sys
import traceback
import types
from pathlib import Path

import torch
from torch.nn.modules.module import (
    register_module_forward_hook,
    register_module_forward_pre_hook,
)
from torch.optim.optimizer import register_optimizer_step_pre_hook

from loopfix.verify import portable, replica, sandbox, synthetic, units

MAX_EVENTS = 64
ACCUMULATION = 8  # backwards a window of gradient accumulation may take before its step
MAX_FORWARDS = 256
LARGE_OUTPUT = 1 << 16  # elements: a larger forward output is kept as its shape and sum


class IterationCap(BaseException):
    """Raised inside the script once it has run the iterations it was given."""


class Recorder:
    def __init__(
        self,
        defer_steps: bool = False,
        iterations: int | None = None,
        retain_graphs: bool = False,
        graphs: bool = False,
    ) -> None:
        self.defer_steps = defer_steps
        self.graphs = graphs  # mark the nodes each backward goes through (`--graphs`)
        # per probe number: how often its value was seen, held a graph, held a graph that an
        # earlier backward had gone through
        self.probes: dict[int, dict[str, int]] = {}
        # (`--graphs`) the backwards (by number) that asked to keep their graph, by the line
        # that called them, and those of them whose kept graph a live tensor still reached
        # when the same line's backward ran again, in the next iteration (a tensor built
        # before the loop: a backward after the capped iterations may use it)
        self.retaining: dict[int | None, set[int]] = {}
        self.kept_alive: set[int] = set()
        self.retain_graphs = retain_graphs or defer_steps
        self.iterations = iterations
        self.backwards = 0
        self.first_optimizer_steps = 0
        self.optimizers: dict[int, int] = {}
        self.events: list[tuple] = []
        self.modules: dict[int, torch.nn.Module] = {}
        self.inside_backward = False  # Tensor.backward calls torch.autograd.backward
        # outermost module forwards, in order: (module index, output summary)
        self.forwards: list[tuple[int, object]] = []
        # parameter group (by id) -> its learning rate when an LR scheduler was built on it:
        # the schedule's first value, which its first optimizer step should use
        self.schedule_start: dict[int, float] = {}
        self.optimizer_built = False
        # optimizer (by id) -> [(scheduler, its last_epoch right after it was built)]
        self.schedulers: dict[int, list] = {}
        self.forward_depth = 0

    def parameter_grads(self) -> list[torch.Tensor | None]:
        return [
            None if p.grad is None else p.grad.detach().clone()
            for module in self.modules.values()
            for p in module.parameters(recurse=False)
        ]

    def positions(self, optimizer) -> list[int]:
        """Where the optimizer's parameters sit in `parameter_grads` (modules that have run,
        in order); parameters of modules that never ran are left out."""
        index = {
            id(p): k
            for k, p in enumerate(
                p for module in self.modules.values() for p in module.parameters(recurse=False)
            )
        }
        return [
            index[id(p)]
            for group in optimizer.param_groups
            for p in group["params"]
            if id(p) in index
        ]

    def record(self, event: tuple) -> None:
        if len(self.events) < MAX_EVENTS:
            self.events.append(event)

    def install(self) -> None:
        recorder = self
        tensor_backward = torch.Tensor.backward
        autograd_backward = torch.autograd.backward

        def traced(run, loss_tensor, *args, **kwargs):
            if recorder.inside_backward:
                return run(*args, **kwargs)
            recorder.backwards += 1
            cap = recorder.iterations
            # nothing has stepped: cap at N backwards, or N accumulation windows of up to 8
            # backwards when an optimizer exists (gradient accumulation steps later)
            limit = cap * ACCUMULATION if cap is not None and recorder.optimizer_built else cap
            if cap is not None and not recorder.optimizers and recorder.backwards > limit:
                raise IterationCap
            retain = _asks_to_retain(args, kwargs)
            line = _caller_line() if recorder.graphs else None
            if line in recorder.retaining:
                recorder.kept_alive |= _held_marks(recorder.retaining[line])
            earlier = _mark_graph(args[0], recorder.backwards) if recorder.graphs else None
            if retain and recorder.graphs:
                recorder.retaining.setdefault(line, set()).add(recorder.backwards)
            if recorder.retain_graphs:
                kwargs["retain_graph"] = True
            loss = _loss_value(loss_tensor)
            before = recorder.parameter_grads()
            recorder.inside_backward = True
            try:
                result = run(*args, **kwargs)
            finally:
                recorder.inside_backward = False
            after = recorder.parameter_grads()
            pairs = enumerate(zip(before, after, strict=False))
            reached = [k for k, (a, b) in pairs if _changed(a, b)]  # (weights_only loads lists)
            # whether every gradient this backward added to started from nothing (None or
            # zeros): a window of accumulation begins here (LF007's oracle)
            started = [k for k in reached if before[k] is None or not bool(before[k].any())]
            fresh = len(started) == len(reached)
            # the parameters whose gradient started from nothing here (LF009's oracle: which
            # backwards each step's gradients came from)
            # whether the code asked to keep the graph, (with `--graphs`) the earlier
            # backwards (by number, from 1) whose graph this one went through again, and the
            # lines of the user's code on the call stack (a backward inside a helper)
            event = ("backward", loss, after, _caller_line(), reached, fresh, started)
            recorder.record((*event, retain, earlier, _caller_lines()))
            return result

        def traced_tensor_backward(tensor, *args, **kwargs):
            return traced(tensor_backward, tensor, tensor, *args, **kwargs)

        def traced_autograd_backward(tensors, *args, **kwargs):
            first = tensors[0] if isinstance(tensors, list | tuple) else tensors
            return traced(autograd_backward, first, tensors, *args, **kwargs)

        def seen_module(module, args):
            recorder.modules.setdefault(id(module), module)
            recorder.forward_depth += 1

        def forward_done(module, args, output):
            recorder.forward_depth -= 1
            if recorder.forward_depth == 0 and len(recorder.forwards) < MAX_FORWARDS:
                index = list(recorder.modules).index(id(module))
                recorder.forwards.append((index, _summary(output)))

        def before_step(optimizer, args, kwargs):
            grads = [
                None if p.grad is None else p.grad.detach().clone()
                for group in optimizer.param_groups
                for p in group["params"]
            ]
            index = recorder.optimizers.setdefault(id(optimizer), len(recorder.optimizers))
            if index == 0:
                recorder.first_optimizer_steps += 1
                cap = recorder.iterations
                if cap is not None and recorder.first_optimizer_steps > cap:
                    raise IterationCap
            # per group: (lr, the schedule's first lr, how many times its scheduler had
            # stepped beyond its start; 0 without a scheduler)
            ahead = max(
                (s.last_epoch - start for s, start in recorder.schedulers.get(id(optimizer), [])),
                default=0,
            )
            rates = [
                (
                    float(group["lr"]),
                    recorder.schedule_start.get(id(group), float(group["lr"])),
                    int(ahead),
                )
                for group in optimizer.param_groups
            ]
            positions = recorder.positions(optimizer)
            recorder.record(("step", type(optimizer).__name__, grads, index, rates, positions))

        def deferred_step(optimizer, *args, **kwargs):
            before_step(optimizer, args, kwargs)
            return None

        torch.Tensor.backward = traced_tensor_backward
        torch.autograd.backward = traced_autograd_backward
        if recorder.defer_steps:
            for optimizer_class in _subclasses(torch.optim.Optimizer):
                if "step" in vars(optimizer_class):
                    optimizer_class.step = deferred_step
        else:
            register_optimizer_step_pre_hook(before_step)
        optimizer_init = torch.optim.Optimizer.__init__

        def optimizer_built(optimizer, *args, **kwargs):
            recorder.optimizer_built = True
            optimizer_init(optimizer, *args, **kwargs)

        torch.optim.Optimizer.__init__ = optimizer_built
        scheduler_init = torch.optim.lr_scheduler.LRScheduler.__init__

        def scheduler_built(scheduler, optimizer, *args, **kwargs):
            scheduler_init(scheduler, optimizer, *args, **kwargs)
            for group in optimizer.param_groups:
                recorder.schedule_start.setdefault(id(group), float(group["lr"]))
            started = getattr(scheduler, "last_epoch", 0)
            recorder.schedulers.setdefault(id(optimizer), []).append((scheduler, started))

        torch.optim.lr_scheduler.LRScheduler.__init__ = scheduler_built
        register_module_forward_pre_hook(seen_module)
        register_module_forward_hook(forward_done)


MAX_NODES = 20_000  # nodes of one graph walked to mark it or to look for marks
MARK = "loopfix_backward"  # the key of a node's metadata: the last backward through it


def _asks_to_retain(args: tuple, kwargs: dict) -> bool:
    """Whether a backward call (`tensor.backward(...)` or `torch.autograd.backward(...)`,
    `args[0]` the tensors) asked to keep its graph: `retain_graph`, else `create_graph`."""
    retain = kwargs.get("retain_graph", args[2] if len(args) > 2 else None)
    if retain is None:
        retain = kwargs.get("create_graph", args[3] if len(args) > 3 else False)
    return bool(retain)


def _nodes(roots, limit: int = MAX_NODES):
    """The autograd nodes reachable from `roots` (tensors or nodes), leaves' gradient
    accumulators left out (every backward reaches those), at most `limit`."""
    stack = [getattr(root, "grad_fn", root) for root in roots]
    seen: set[int] = set()
    while stack and len(seen) < limit:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if type(node).__name__ == "AccumulateGrad":
            continue
        yield node
        stack.extend(child for child, _ in node.next_functions)


def _tensors(value, depth: int = 0) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if depth > 3 or not isinstance(value, list | tuple | dict):
        return []
    items = value.values() if isinstance(value, dict) else value
    return [t for item in list(items)[:64] for t in _tensors(item, depth + 1)]


def _held_marks(numbers: set[int]) -> set[int]:
    """Which of the backwards `numbers` marked a node of a graph that a live tensor still
    reaches (any tensor the collector tracks: a variable, an attribute of a module or an
    object, a cache, a closure, a generator's frame): that graph outlives the backward
    that kept it."""
    found: set[int] = set()
    roots = [o for o in gc.get_objects() if isinstance(o, torch.Tensor) and o.grad_fn is not None]
    for node in _nodes(roots):
        mark = node.metadata.get(MARK)
        if mark in numbers:
            found.add(mark)
    return found


def _mark_graph(tensors, number: int) -> list[int]:
    """Mark every node of the graph about to be backwarded with the backward's `number`;
    the numbers of the earlier backwards that had marked some of them (sorted)."""
    earlier = set()
    for node in _nodes(_tensors(tensors if isinstance(tensors, list | tuple) else [tensors])):
        metadata = node.metadata
        if MARK in metadata:
            earlier.add(metadata[MARK])
        metadata[MARK] = number
    return sorted(earlier)


def probe(recorder: Recorder, number: int, value, watch=None):
    """`__loopfix_probe__(number, value)`: the verifier wraps an expression of the original
    with it. Records whether `value` holds a graph, and whether a backward already went
    through that graph (only marked with `--graphs`), and returns `value` unchanged. With
    `watch` (`lambda: meter.sum`), what it returns is recorded instead of `value` (nothing
    when it raises: the state is not there yet)."""
    counts = recorder.probes.setdefault(number, {"seen": 0, "graph": 0, "backwarded": 0})
    counts["seen"] += 1
    watched = value
    if watch is not None:
        try:
            watched = watch()
        except Exception:  # noqa: BLE001 - user code: no state yet, or not one to read
            watched = None
    roots = [t for t in _tensors(watched) if t.grad_fn is not None]
    if roots:
        counts["graph"] += 1
        if any(MARK in node.metadata for node in _nodes(roots)):
            counts["backwarded"] += 1
    return value


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _loss_value(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.detach().clone()


def _changed(before: torch.Tensor | None, after: torch.Tensor | None) -> bool:
    """Whether a backward added to this gradient (it appeared, or its value moved)."""
    if after is None:
        return False
    return before is None or not torch.equal(before, after)


def _summary(output) -> object:
    """A forward's output as compared bit for bit: its first tensor (the whole of it, or its
    shape and sum when large), or None."""
    tensor = _first_tensor(output)
    if tensor is None:
        return None
    tensor = tensor.detach()
    if tensor.numel() > LARGE_OUTPUT:
        return (tuple(tensor.shape), float(tensor.double().sum()))
    return tensor.to("cpu").clone()


def _first_tensor(output, depth: int = 0):
    if isinstance(output, torch.Tensor):
        return output
    if depth > 3 or not isinstance(output, list | tuple | dict):
        return None
    for item in output.values() if isinstance(output, dict) else output:
        found = _first_tensor(item, depth + 1)
        if found is not None:
            return found
    return None


_LIBRARIES = tuple(  # the folders of torch and of loopfix, ending in a separator
    os.path.join(folder, "")
    for folder in (os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(__file__)))
)


# the standard library's folder, ending in a separator
_STANDARD_LIBRARY = os.path.join(os.path.dirname(os.__file__), "")


@functools.cache
def _users(filename: str) -> bool:
    """A file of the user's code: not an installed package's, the standard library's (also
    frozen: `<frozen runpy>`), torch's or loopfix's own. Asked for every frame on the stack
    of every backward, of a few files: kept per file name."""
    if filename.startswith("<frozen "):
        return False
    path = os.path.abspath(filename)
    folders = path.split(os.sep)
    if "site-packages" in folders or "dist-packages" in folders:
        return False
    return not path.startswith((_STANDARD_LIBRARY, *_LIBRARIES))


def _caller_line() -> int | None:
    """The line of the user's code that called backward (the first frame of a file of the
    user's: `_users`)."""
    frame = sys._getframe(2)
    while frame is not None:
        if _users(frame.f_code.co_filename):
            return frame.f_lineno
        frame = frame.f_back
    return None


def _caller_lines(limit: int = 8) -> list[int]:
    """The lines of the user's code on the stack, innermost first (at most `limit`): not of
    torch, loopfix, the standard library (`runpy`, which runs the script, would add its
    own line numbers) or another installed package."""
    lines, frame = [], sys._getframe(2)
    while frame is not None and len(lines) < limit:
        if _users(frame.f_code.co_filename):
            lines.append(frame.f_lineno)
        frame = frame.f_back
    return lines


class CudaOnCpu:
    """`Tensor.cuda()` and `Module.cuda()` return the tensor or module as it is, on the CPU,
    when torch has no CUDA (where they raise "Torch not compiled with CUDA enabled");
    `used` says whether the script called one. Other ways to name a GPU (`.to("cuda")`,
    `device="cuda"`) still raise."""

    def __init__(self) -> None:
        self.used = False

    def install(self) -> None:
        if torch.cuda.is_available():
            return

        def stay(value, *args, **kwargs):
            self.used = True
            return value

        torch.Tensor.cuda = stay
        torch.nn.Module.cuda = stay


class WorkersHere:
    """A worker process of the user's code (`mp.Process(target=train, args=(...))`, an A3C
    `Worker(mp.Process)` with its own `run()`) runs in this process when started, to its
    end, one worker after another: what it computes is recorded like the rest of the run
    (in a process of its own it would be lost), and its shared model is this process's own.
    A library's processes (a `DataLoader`'s workers) start as usual. `used` counts the
    workers run here."""

    def __init__(self) -> None:
        self.used = 0

    def install(self) -> None:
        import multiprocessing.process

        base = multiprocessing.process.BaseProcess
        start, join, is_alive = base.start, base.join, base.is_alive
        here = self

        def started(process) -> None:
            if not _user_worker(process):
                return start(process)
            here.used += 1
            process._loopfix_here = True
            try:
                process.run()
            finally:
                process._loopfix_done = True
            return None

        def joined(process, timeout=None) -> None:
            if getattr(process, "_loopfix_here", False):
                return None
            return join(process, timeout)

        def alive(process) -> bool:
            if getattr(process, "_loopfix_here", False):
                return not getattr(process, "_loopfix_done", False)
            return is_alive(process)

        base.start, base.join, base.is_alive = started, joined, alive


def _user_worker(process) -> bool:
    """Whether the process runs code of the user's: its class's own `run()`, or its target."""
    import multiprocessing.process

    run = type(process).run
    if run is not multiprocessing.process.BaseProcess.run:
        code = getattr(run, "__code__", None)
    else:
        code = getattr(getattr(process, "_target", None), "__code__", None)
    return code is not None and _users(code.co_filename)


def pick_device(requested: str) -> str:
    if requested != "auto":
        return requested
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def _options(argv: list[str]) -> tuple[dict, list[str]]:
    options = {"defer_steps": False, "iterations": None, "device": "cpu", "call": None}
    options["retain_graphs"] = False
    options["clone_saved"] = False
    options["graphs"] = False
    options["fixture"] = None
    options["synthetic_loop"] = None
    options["package"] = None
    while argv and argv[0].startswith("--"):
        flag = argv.pop(0)
        if flag == "--defer-steps":
            options["defer_steps"] = True
        elif flag == "--retain-graphs":
            options["retain_graphs"] = True
        elif flag == "--clone-saved":
            options["clone_saved"] = True
        elif flag == "--graphs":
            options["graphs"] = True
        elif flag == "--iterations":
            options["iterations"] = int(argv.pop(0))
        elif flag == "--device":
            options["device"] = argv.pop(0)
        elif flag in ("--call", "--fixture"):
            options[flag[2:]] = argv.pop(0)
        elif flag == "--synthetic-loop":
            options["synthetic_loop"] = int(argv.pop(0))
        elif flag == "--package":  # NAME FOLDER: the script's package and where it is found
            options["package"] = (argv.pop(0), argv.pop(0))
    return options, argv


def run_unit(
    script: str,
    call: str | None,
    fixture: str | None,
    synthetic_loop: int | None = None,
    device: str = "cpu",
    facts: dict | None = None,
    package: str | None = None,
) -> None:
    """Run the script as `__main__`, or call one of its functions with a fixture's arguments
    or with arguments the harness builds (with synthetic data for one loop if asked). Notes in
    `facts["replica"]` whether stand-ins (`replica.py`) took the place of the author's models,
    before the call (which may end by reaching its iteration cap). `package`: the package
    the script is a module of, for its relative imports (as `python -m` runs it)."""
    facts = {} if facts is None else facts
    run_name = "__main__" if call is None else "loopfix_unit"
    namespace = _execute(script, run_name, synthetic_loop, package)
    if call is None:
        return
    torch.manual_seed(0)
    if fixture is not None:
        target, args, kwargs = _fixture_arguments(namespace, fixture, call)
    else:
        with open(script, "rb") as stream:
            plan = units.stand_in_plan(stream.read().decode("utf-8-sig"), call)
        if plan is None:
            raise RuntimeError(f"loopfix: no function {call} to call")
        target, args, kwargs = replica.build(plan, namespace, device)
        facts["replica"] = plan.stands_in
    target(*args, **kwargs)


def _execute(
    script: str, run_name: str, synthetic_loop: int | None, package: str | None = None
) -> dict:
    """The script's namespace after running it under `run_name` (in `package`, whose
    relative imports then resolve, as `python -m package.module` runs it)."""
    if synthetic_loop is None and package is None:
        return runpy.run_path(script, run_name=run_name)
    with open(script, "rb") as stream:
        source = stream.read().decode("utf-8-sig")
    if synthetic_loop is None:
        code = compile(source, script, "exec")
    else:
        code = synthetic.instrument(source, synthetic_loop, script)
    namespace = {"__name__": run_name, "__file__": script, "__loopfix_synthetic__": synthetic}
    if package is not None:
        namespace["__package__"] = package
    exec(code, namespace)  # noqa: S102 - this child process exists to run user code
    return namespace


def _fixture_arguments(namespace: dict, fixture: str, call: str):
    fixtures = runpy.run_path(fixture, run_name="loopfix_fixtures")
    builder = fixtures["fixture_" + call.replace(".", "_")]
    module = types.SimpleNamespace(**namespace)  # the unit's own module, original or patched
    built = builder(module) if inspect.signature(builder).parameters else builder()
    if "." not in call:
        args, kwargs = built
        return namespace[call], args, kwargs
    instance, args, kwargs = built
    return getattr(instance, call.split(".", 1)[1]), args, kwargs


def main(argv: list[str]) -> int:
    options, (trace_file, script, *script_args) = _options(list(argv))
    device = pick_device(options["device"])
    if device != "cpu":
        torch.set_default_device(device)
    network = sandbox.enter()
    weights = synthetic.SyntheticWeights()
    weights.install()
    if not script_args:  # a command line the user gave is taken as it is
        synthetic.install_made_up_arguments()
    cuda_calls = CudaOnCpu()
    if device == "cpu":
        cuda_calls.install()
    workers = WorkersHere()
    workers.install()
    recorder = Recorder(
        options["defer_steps"], options["iterations"], options["retain_graphs"], options["graphs"]
    )
    recorder.install()
    builtins.__loopfix_probe__ = functools.partial(probe, recorder)
    if options["clone_saved"]:  # entered for the whole run; the process ends with it
        torch.autograd.graph.saved_tensors_hooks(_copy_saved, _unpack_saved).__enter__()
    torch.manual_seed(0)
    sys.argv = [script, *script_args]
    package = None
    if options["package"] is not None:
        package, folder = options["package"]
        sys.path.insert(0, folder)
    error, capped, data_error, facts = None, False, False, {"replica": False}
    try:
        unit = options["call"], options["fixture"], options["synthetic_loop"]
        run_unit(script, *unit, device=device, facts=facts, package=package)
    except IterationCap:
        capped = True
    except SystemExit as exit_:
        if exit_.code not in (None, 0):
            error = f"SystemExit: {exit_.code}"
            data_error = recorder.backwards == 0  # exited before training: its data, often
    except BaseException as raised:  # noqa: BLE001 - the trace must be saved whatever happens
        error = described(raised)
        data_error = synthetic.is_data_error(raised) or (
            isinstance(raised, AssertionError) and recorder.backwards == 0
        )
        traceback.print_exc()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if device == "cuda":
        peak = torch.cuda.max_memory_allocated()
    trace = {"events": recorder.events, "error": error, "capped": capped}
    trace["forwards"] = recorder.forwards
    trace["probes"] = [{"probe": k, **counts} for k, counts in sorted(recorder.probes.items())]
    trace["kept_alive"] = sorted(recorder.kept_alive)
    trace |= {"data_error": data_error, "synthetic": options["synthetic_loop"] is not None}
    trace |= {"replica": facts["replica"], "device": device, "peak_memory": peak}
    trace |= {"iterations": _iterations(recorder), "sandbox": network}
    trace |= {"synthetic_weights": weights.used, "missing_package": _missing_package(error)}
    trace["cuda_on_cpu"] = cuda_calls.used
    trace["workers_here"] = workers.used
    portable.save(trace, Path(trace_file))
    return 1 if error else 0


def described(raised: BaseException) -> str:
    """`RuntimeError: <message>`; an error without a message (a bare `assert`) also says
    where it was raised: the innermost frame of the user's code, not of an installed package
    or the standard library (`AssertionError: (raised at data.py:12: assert
    os.path.exists(path))`, relative to the working folder when it is inside it)."""
    said = f"{type(raised).__name__}: {raised}"
    if str(raised).strip():
        return said
    frames = [f for f in traceback.extract_tb(raised.__traceback__) if _users(f.filename)]
    if not frames:
        return said
    frame, here = frames[-1], os.getcwd()
    where = os.path.abspath(frame.filename)
    if where.startswith(here + os.sep):
        where = os.path.relpath(where, here)
    line = f": {frame.line}" if frame.line else ""
    return f"{said}(raised at {where}:{frame.lineno}{line})"


def _copy_saved(tensor):
    return tensor.clone()


def _unpack_saved(tensor):
    return tensor


def _missing_package(error: str | None) -> str | None:
    """The top-level name of a package the run could not import (stand-ins cover logging,
    plotting and progress packages)."""
    prefix = "ModuleNotFoundError: No module named '"
    if error and error.startswith(prefix):
        return error[len(prefix) :].split("'")[0].split(".")[0]
    return None


def _iterations(recorder: Recorder) -> int:
    """Iterations that ran to the end (the capped one that was stopped does not count): steps
    of the first optimizer, or backwards where no optimizer was built (none, where one was
    built and never stepped)."""
    done = recorder.first_optimizer_steps
    if not recorder.optimizers and not recorder.optimizer_built:
        done = recorder.backwards
    return min(done, recorder.iterations) if recorder.iterations is not None else done


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
