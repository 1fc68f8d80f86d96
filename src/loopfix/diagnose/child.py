"""The instrumented run of `loopfix diagnose`: runs the user's script in this (child) process
and, when a backward fails, explains the failure from what the run recorded.

    python -m loopfix.diagnose.child REPORT_FILE [--iterations N] [--allow-network]
                                     (SCRIPT | -m MODULE) [ARGS...]

Installed before user code:
- a `TorchFunctionMode` that tags every autograd node a torch operation creates with a serial
  number, the iteration and the user's source line (`node.metadata`), and records every
  in-place operation (the changed tensor's shape and new version, the operation, the line);
- wrappers of `Tensor.backward` / `torch.autograd.backward` that record each backward (line,
  iteration, `retain_graph`, the serials of the nodes its graph holds) and, when one fails with
  "backward through the graph a second time" or "modified by an inplace operation", explain it:
  the node of an earlier iteration (and the variable that holds it) or the backward that freed
  the graph; the changed tensor (a parameter's qualified name), the operation and line that
  changed it, and the forward that saved it;
- global optimizer step hooks (the iteration count: the run stops as a success, "capped",
  when the first optimizer is about to step for the (N+1)th time) and module forward hooks;
- the sandbox of verification runs (no network unless `--allow-network`) and a record of
  warnings (torch's scheduler-order warning among them).

"Line" is the innermost frame in the user's files: not torch, not loopfix, not site-packages.
The report is JSON. This module imports torch and runs user code: only in a child process.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
import traceback
import warnings
from itertools import count
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode

from loopfix.verify import sandbox

FREED = "backward through the graph a second time"
VERSION = "modified by an inplace operation"
VERSION_DETAIL = re.compile(
    r"\[torch\.\w+ \[([\d, ]*)\]\](?:, which is output (\d+) of (\w+),)? is at version (\d+); "
    r"expected version (\d+)"
)
MAX_NODES = 20000  # nodes walked per graph
MULTI_PROCESS = "multi-process"


class IterationCap(BaseException):
    """Raised to stop the run after the capped number of iterations."""


class MultiProcess(BaseException):
    """Raised when the script starts a process group (out of scope)."""


def user_line(skip: int = 2) -> tuple[str, int] | None:
    """(file, line) of the innermost frame in the user's own files."""
    frame = sys._getframe(skip)
    while frame is not None:
        name = frame.f_code.co_filename
        if _is_user_file(name):
            return os.path.abspath(name), frame.f_lineno
        frame = frame.f_back
    return None


_OWN = (os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(__file__)))


def _is_user_file(name: str) -> bool:
    if name.startswith("<") or "site-packages" in name or "dist-packages" in name:
        return False
    return not (name.startswith(_OWN) or name.startswith(sys.base_prefix))


class Recorder(TorchFunctionMode):
    def __init__(self, iterations: int | None) -> None:
        super().__init__()
        self.cap = iterations
        self.iteration = 1
        self.serials = count(1)
        self.backwards: list[dict] = []
        self.steps: list[dict] = []
        self.changes: list[dict] = []  # in-place operations: shape, version, line, operation
        self.forwards: list[dict] = []  # module calls: name, class, line, iteration
        self.optimizers: dict[int, int] = {}
        self.first_steps = 0
        self.explanation: dict | None = None
        self.warnings: list[dict] = []
        self.roots: dict[int, tuple[str, torch.nn.Module]] = {}
        self.inside_backward = False
        self.first_event = None  # (kind, line) of the event that began the first iteration
        self.starts: list[int] = []  # the first node serial of each iteration after the first
        self.boundary = self.last_serial = 0
        self.consumed: set[int] = set()  # nodes some backward went through
        self.freed: dict[int, int] = {}  # node serial -> index of the backward that freed it
        self.carried: list[dict] = []  # tensors of an earlier iteration given to a module
        self.open_calls: list[tuple] = []  # module calls under way: (module, first serial)
        self.spans: list[tuple[int, int, int]] = []  # leaf module calls: (first, last, id)
        self.sequence = count()  # orders forwards and in-place changes

    # -- every torch operation --------------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        result = func(*args, **(kwargs or {}))
        name = getattr(func, "__name__", "")
        if name.endswith("_") and not name.startswith("_") or name in IN_PLACE_DUNDERS:
            self._changed(name, args[0] if args else None)
        self._tag(result)
        return result

    def _tag(self, result) -> None:
        for tensor in result if isinstance(result, tuple | list) else (result,):
            node = _grad_fn(tensor)
            if node is None or "loopfix" in node.metadata:
                continue
            line = user_line(3)
            # the node and those below it that no call tagged (built inside C++: an RNN's
            # steps), down to the nodes of earlier calls
            stack = [node]
            while stack:
                current = stack.pop()
                if current is None or "loopfix" in current.metadata:
                    continue
                if type(current).__name__ == "AccumulateGrad":
                    continue  # a parameter's leaf: shared by every graph, never freed
                serial = next(self.serials)
                self.last_serial = serial
                current.metadata["loopfix"] = (serial, None, line)
                stack.extend(child for child, _ in current.next_functions)

    def _event(self, kind: str, line) -> None:
        """A backward or a step: the iteration starts again when the event that began the
        current one recurs; it then began right after the previous iteration's last event
        (the forward of the new iteration came before this event)."""
        key = (kind, line)
        if self.first_event is None:
            self.first_event = key
        elif key == self.first_event:
            self.iteration += 1
            self.starts.append(self.boundary)
        self.boundary = self.last_serial + 1

    def iteration_of(self, serial: int) -> int:
        """The iteration in which the node with this serial number was built."""
        return 1 + sum(1 for start in self.starts if serial >= start)

    def _changed(self, name: str, target) -> None:
        targets = target if isinstance(target, list | tuple) else [target]
        line = user_line(3)
        for tensor in targets:
            if isinstance(tensor, torch.Tensor):
                self.changes.append(
                    {
                        "operation": OPERATION_NAMES.get(name, name),
                        "shape": list(tensor.shape),
                        "version": tensor._version,
                        "line": line,
                        "mark": self.last_serial,  # after the nodes built before it
                        "seq": next(self.sequence),
                        "ptr": tensor.data_ptr() if tensor.layout == torch.strided else 0,
                    }
                )
        del self.changes[:-5000]

    # -- backwards ----------------------------------------------------------------------------
    def backward(self, run, loss, *args, **kwargs):
        if self.inside_backward:  # `Tensor.backward` calls `torch.autograd.backward`
            return run(*args, **kwargs)
        self.inside_backward = True
        try:
            return self._backward(run, loss, *args, **kwargs)
        finally:
            self.inside_backward = False

    def _backward(self, run, loss, *args, **kwargs):
        retain = bool(kwargs.get("retain_graph") or kwargs.get("create_graph"))
        line = user_line(3)
        self._event("backward", line)
        record = {"line": line, "iteration": self.iteration, "retain": retain}
        record["nodes"] = _serials(loss)
        try:
            result = run(*args, **kwargs)
        except RuntimeError as error:
            if self.explanation is None and (FREED in str(error) or VERSION in str(error)):
                self.explanation = self._explain(str(error), loss, record)
            raise
        finally:
            self.backwards.append(record)
        record["end"] = self.last_serial + 1
        self.consumed |= record["nodes"]
        if not retain:
            self.freed |= dict.fromkeys(record["nodes"], len(self.backwards) - 1)
        return result

    def _explain(self, message: str, loss, failing: dict) -> dict:
        explanation = {"backward": _line(failing["line"]), "iteration": self.iteration}
        if FREED in message:
            explanation |= {"kind": "freed graph"} | self._freed(loss, failing)
        else:
            explanation |= {"kind": "version"} | self._version(message, loss)
        return explanation

    def _freed(self, loss, failing: dict) -> dict:
        """The node of the failing graph an earlier backward freed (the one nearest the loss),
        where it was built, the variable that carried it, and the backward that freed it."""
        old = [n for n in _nodes(loss) if _meta(n) and _meta(n)[0] in self.freed]
        found: dict = {}
        if not old:
            return found
        serial, _, line = _meta(old[0])
        built_in = self.iteration_of(serial)
        found["created"] = {"line": _line(line), "iteration": built_in, "node": _name(old[0])}
        freeing = self.backwards[self.freed[serial]]
        # the first named state given to a module after the freeing backward
        carried = [
            c
            for c in self.carried
            if c["name"] and c["mark"] >= freeing.get("end", 0) and c["serial"] < freeing["end"]
        ]
        if carried and built_in < self.iteration:
            last = carried[0]
            found["variable"] = {"name": last["name"], "read_at": last["read_at"]}
            found["variable"] |= {"created": last["created"]}
            found["variable"] |= {"created_in": self.iteration_of(last["serial"])}
        else:
            carrier = self._carrier({_meta(n)[0] for n in old})
            if carrier is not None and built_in < self.iteration:
                found["variable"] = carrier
        found["freed_by"] = {"line": _line(freeing["line"]), "iteration": freeing["iteration"]}
        return found

    def _carrier(self, serials: set[int]) -> dict | None:
        """The variable of the user's frames whose value holds a node of an earlier iteration:
        locals from the innermost user frame outwards, then module globals."""
        frame = sys._getframe(2)
        seen: set[int] = set()
        while frame is not None:
            if _is_user_file(frame.f_code.co_filename):
                spaces = [("", frame.f_locals)]
                if frame.f_globals is not frame.f_locals:
                    spaces.append(("", frame.f_globals))
                for prefix, space in spaces:
                    for name, value in list(space.items()):
                        if name.startswith("__") or id(value) in seen:
                            continue
                        seen.add(id(value))
                        path = _holding(name, value, serials)
                        if path is not None:
                            line = _frame_line(frame)
                            return {"name": prefix + path, "read_at": _line(line)}
            frame = frame.f_back
        return None

    def _version(self, message: str, loss) -> dict:
        detail = VERSION_DETAIL.search(message)
        found: dict = {}
        if detail is None:
            return found
        shape = [int(s) for s in detail.group(1).replace(" ", "").split(",") if s]
        output_of, version = detail.group(3), int(detail.group(4))
        found["tensor"] = {"shape": shape, "version": version, "expected": int(detail.group(5))}
        if output_of:
            found["tensor"]["output_of"] = output_of
            makers = [n for n in _nodes(loss) if _name(n) == output_of and _meta(n)]
            if makers:
                serial, _, line = _meta(makers[0])
                iteration = self.iteration_of(serial)
                found["saved"] = {"line": _line(line), "iteration": iteration, "node": output_of}
        expected = int(detail.group(5))
        # a view of the tensor (a Linear's transposed weight): its base may be either shape
        view = bool(output_of) and re.sub(r"Backward\d*$", "", output_of) in VIEW_NODES
        shapes = [shape] + ([shape[::-1]] if view else [])
        culprit = _culprit(loss)  # the node whose saved tensor was changed
        # the first change after the save, from the expected version to the next (a change
        # before the saving node was built, such as a copy into a target network's weights of
        # that shape in `__init__`, cannot be it)
        saved_at = _meta(culprit)[0] if culprit is not None and _meta(culprit) else -1
        change = next(
            (
                c
                for c in self.changes
                if c["shape"] in shapes and c["version"] == expected + 1 and c["mark"] >= saved_at
            ),
            None,
        )
        module = None
        if culprit is not None and _meta(culprit):
            serial, _, line = _meta(culprit)
            found["saved"] = {"line": _line(line), "iteration": self.iteration_of(serial)}
            found["saved"]["node"] = _name(culprit)
            module = self._module_built(serial)
        if not output_of or view:
            named = self._parameters_named(shapes, version, change, module)
            if len(named) == 1:
                found["tensor"]["parameter"], parameter_shape = named[0]
                found["tensor"]["shape"] = parameter_shape
            elif named:
                found["tensor"]["candidates"] = [name for name, _ in named]
        if change is not None and "saved" not in found:
            stale = [n for n in _nodes(loss) if _meta(n) and _meta(n)[0] <= change["mark"]]
            if stale:  # the failing graph's nodes built before the change: its saving forward
                serial, _, line = _meta(stale[0])
                found["saved"] = {"line": _line(line), "iteration": self.iteration_of(serial)}
        if change is not None:
            found["changed"] = {
                "operation": change["operation"],
                "line": _line(change["line"]),
                "iteration": self.iteration_of(change["mark"]),
                "by_step": any(s["line"] == change["line"] for s in self.steps),
            }
        return found

    def _module_built(self, serial: int):
        """The leaf module whose call built the node with this serial number."""
        spans = [s for s in self.spans if s[0] <= serial <= s[1]]
        if not spans:
            return None
        _, _, module_id = min(spans, key=lambda s: s[1] - s[0])
        return self.roots.get(module_id)

    def _parameters_named(self, shapes, version: int, change: dict | None, within=None) -> list:
        """(qualified name, shape) of each parameter with one of `shapes` at `version`: of
        `within` (the (name, module) whose call saved it) when known, else of the modules
        run, and, when the change that bumped it is known, at its storage."""
        found, seen = [], set()
        places = [within] if within is not None else list(self.roots.values())
        for root_name, module in places:
            for name, parameter in module.named_parameters():
                if id(parameter) in seen or parameter._version != version:
                    continue
                if list(parameter.shape) not in shapes:
                    continue
                if within is None and change and change["ptr"] != parameter.data_ptr():
                    continue
                seen.add(id(parameter))
                qualified = f"{root_name}.{name}" if root_name else name
                found.append((qualified, list(parameter.shape)))
        return found

    # -- steps and forwards -------------------------------------------------------------------
    def before_step(self, optimizer, args, kwargs) -> None:
        index = self.optimizers.setdefault(id(optimizer), len(self.optimizers))
        if index == 0:
            self.first_steps += 1
            if self.cap is not None and self.first_steps > self.cap:
                raise IterationCap
        line = user_line(3)
        self._event("step", line)
        self.steps.append({"line": line, "iteration": self.iteration, "optimizer": index})

    def before_forward(self, module, args) -> None:
        self._note_carried(args)
        self._note_module(module)
        self.open_calls.append((module, self.last_serial + 1))

    def after_forward(self, module, args, output) -> None:
        """The span of node serial numbers a module call built (its own and its children's)."""
        if self.open_calls and self.open_calls[-1][0] is module:
            _, start = self.open_calls.pop()
            if not any(True for _ in module.children()):  # a leaf: Linear, Conv, ...
                self.spans.append((start, self.last_serial, id(module)))
                del self.spans[:-20000]

    def _note_carried(self, args) -> None:
        """A module given a tensor whose graph was built in an earlier iteration: the state a
        loop carries (named as the calling frame names it)."""
        if len(self.carried) >= 20:
            return
        for value in args:
            tensors = value if isinstance(value, list | tuple) else (value,)
            for tensor in tensors:
                meta = _meta(_grad_fn(tensor)) if isinstance(tensor, torch.Tensor) else None
                if not meta or not self._reaches_consumed(tensor):
                    continue  # not a graph a backward already went through
                frame = _user_frame(sys._getframe(2))
                name = _variable_of(value, frame) if frame is not None else None
                line = _frame_line(frame) if frame is not None else None
                self.carried.append(
                    {"name": name, "read_at": _line(line), "mark": self.last_serial + 1}
                    | {"serial": meta[0], "created": _line(meta[2])}
                )
                return

    def _reaches_consumed(self, tensor) -> bool:
        """Whether the tensor's graph (its first nodes) holds one a backward went through."""
        if not self.consumed:
            return False
        return any(_meta(n) and _meta(n)[0] in self.consumed for n in _nodes(tensor, 200))

    def _note_module(self, module) -> None:
        if id(module) in self.roots and self.roots[id(module)][0]:
            label = self.roots[id(module)][0]
            line = user_line(2)
            self.forwards.append(
                {"name": label, "line": _line(line), "mark": self.last_serial + 1}
                | {"seq": next(self.sequence)}
            )
            del self.forwards[:-2000]
            return
        frame = _user_frame(sys._getframe(1))
        if frame is None:
            return
        name = _variable_of(module, frame)
        if name is not None:
            self.roots[id(module)] = (name, module)
            for sub, child in module.named_modules():
                if sub:
                    self.roots.setdefault(id(child), (f"{name}.{sub}", child))
        line = _line(_frame_line(frame))
        label = self.roots.get(id(module), ("", None))[0]
        self.forwards.append(
            {"name": label, "line": line, "mark": self.last_serial + 1}
            | {"seq": next(self.sequence)}
        )
        del self.forwards[:-2000]


# autograd nodes of views (by name, less any "Backward0"): the changed tensor is their base
VIEW_NODES = frozenset(
    {"AsStrided", "T", "View", "Transpose", "Permute", "Expand", "Select", "Slice",
     "Unsqueeze", "Squeeze", "UnsafeView"}
)  # fmt: skip
IN_PLACE_DUNDERS = {"__iadd__", "__isub__", "__imul__", "__itruediv__", "__setitem__"}
OPERATION_NAMES = {
    "__iadd__": "+=", "__isub__": "-=", "__imul__": "*=", "__itruediv__": "/=",
    "__setitem__": "a slice assignment",
}  # fmt: skip


def _frame_line(frame) -> tuple[str, int]:
    return os.path.abspath(frame.f_code.co_filename), frame.f_lineno


def _user_frame(frame):
    while frame is not None and not _is_user_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def _variable_of(module, frame) -> str | None:
    """The name the user's frame (or its `self`) knows a module (or a value) by."""
    for scope in (frame.f_locals, frame.f_globals):
        for name, value in scope.items():
            if value is module:
                return name
        owner = scope.get("self")
        if owner is not None:
            attributes = {**vars(owner), **vars(owner).get("_modules", {})}
            for name, value in attributes.items():
                if value is module and not name.startswith("_"):
                    return f"self.{name}"
    return None


def _grad_fn(value):
    """`value.grad_fn` for a tensor, else None; also None where reading it raises: a view made
    under `torch.no_grad()` whose base was then changed in place (`w[0].fill_(0)` in
    `nn.Embedding(padding_idx=0)`'s `reset_parameters`) raises "A view was created in
    no_grad mode ..." on `grad_fn`, which the user's code never reads."""
    if not isinstance(value, torch.Tensor):
        return None
    try:
        return value.grad_fn
    except RuntimeError:
        return None


def _holding(name: str, value, serials: set[int], depth: int = 0) -> str | None:
    if isinstance(value, torch.Tensor):
        node = _grad_fn(value)
        if node is not None and _meta(node) and _meta(node)[0] in serials:
            return name
        return None
    if depth >= 2:
        return None
    if isinstance(value, list | tuple):
        for index, item in enumerate(value[:64]):
            found = _holding(f"{name}[{index}]", item, serials, depth + 1)
            if found:
                return found
    elif isinstance(value, dict):
        for key, item in list(value.items())[:64]:
            found = _holding(f"{name}[{key!r}]", item, serials, depth + 1)
            if found:
                return found
    elif hasattr(value, "__dict__") and not isinstance(value, type | torch.nn.Module):
        for key, item in list(vars(value).items())[:64]:
            found = _holding(f"{name}.{key}", item, serials, depth + 1)
            if found:
                return found
    elif isinstance(value, torch.nn.Module):
        for key, item in list(vars(value).items())[:64]:
            if not key.startswith("_"):
                found = _holding(f"{name}.{key}", item, serials, depth + 1)
                if found:
                    return found
    return None


def _nodes(loss, limit: int = MAX_NODES) -> list:
    """The autograd nodes of `loss`'s graph (breadth first, at most `limit`)."""
    start = getattr(loss, "grad_fn", None)
    if start is None:
        return []
    seen, order, queue = {id(start)}, [], [start]
    while queue and len(order) < limit:
        node = queue.pop(0)
        order.append(node)
        for child, _ in getattr(node, "next_functions", ()):
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                queue.append(child)
    return order


def _culprit(loss):
    """The node of `loss`'s graph whose saved tensor was changed in place: reading it raises
    the version error."""
    for node in _nodes(loss):
        for attribute in dir(node):
            if not attribute.startswith("_saved_"):
                continue
            try:
                getattr(node, attribute)
            except RuntimeError as error:
                if VERSION in str(error):
                    return node
            except Exception:  # noqa: BLE001, S112 - an attribute that cannot be read
                continue
    return None


def _serials(loss) -> set[int]:
    return {_meta(n)[0] for n in _nodes(loss) if _meta(n)}


def _meta(node):
    try:
        return node.metadata.get("loopfix")
    except (AttributeError, RuntimeError):
        return None


def _name(node) -> str:
    return type(node).__name__


def _line(line) -> dict | None:
    return None if line is None else {"path": line[0], "line": line[1]}


# -- the run ---------------------------------------------------------------------------------


def install(recorder: Recorder) -> None:
    tensor_backward, autograd_backward = torch.Tensor.backward, torch.autograd.backward

    def traced_tensor_backward(tensor, *args, **kwargs):
        names = ("gradient", "retain_graph", "create_graph", "inputs")
        kwargs |= dict(zip(names, args, strict=False))
        return recorder.backward(tensor_backward, tensor, tensor, **kwargs)

    def traced_autograd_backward(tensors, *args, **kwargs):
        first = tensors[0] if isinstance(tensors, list | tuple) else tensors
        names = ("grad_tensors", "retain_graph", "create_graph", "grad_variables", "inputs")
        kwargs |= dict(zip(names, args, strict=False))
        return recorder.backward(autograd_backward, first, tensors, **kwargs)

    torch.Tensor.backward = traced_tensor_backward
    torch.autograd.backward = traced_autograd_backward
    from torch.optim.optimizer import register_optimizer_step_pre_hook

    register_optimizer_step_pre_hook(recorder.before_step)
    torch.nn.modules.module.register_module_forward_pre_hook(recorder.before_forward)
    torch.nn.modules.module.register_module_forward_hook(recorder.after_forward)
    if torch.distributed.is_available():
        torch.distributed.init_process_group = _multi_process
    torch.multiprocessing.spawn = _multi_process
    original = warnings.showwarning

    def shown(message, category, filename, lineno, file=None, line=None):
        where = user_line(2)
        recorder.warnings.append({"message": str(message), "line": _line(where)})
        return original(message, category, filename, lineno, file, line)

    warnings.showwarning = shown
    warnings.simplefilter("always")


def _print_user_traceback(raised: BaseException):
    """The traceback's frames in the user's files (not torch's, not loopfix's) and the error,
    on stderr; the innermost user frame."""
    frames = [f for f in traceback.extract_tb(raised.__traceback__) if _is_user_file(f.filename)]
    lines = ["Traceback (the user's frames):\n", *traceback.format_list(frames)]
    lines += traceback.format_exception_only(type(raised), raised)
    sys.stderr.write("".join(lines))
    return (os.path.abspath(frames[-1].filename), frames[-1].lineno) if frames else None


def _multi_process(*args, **kwargs):
    raise MultiProcess


def main(argv: list[str]) -> int:
    report_path, options, target = _options(argv)
    network = "allowed" if options["allow_network"] else sandbox.enter()
    recorder = Recorder(options["iterations"])
    install(recorder)
    error, capped, code, kind, error_at = None, False, 0, None, None
    module = target[0] == "-m"
    sys.argv = [target[1], *target[2:]] if module else list(target)
    torch.manual_seed(0)
    with recorder:
        try:
            if module:
                runpy.run_module(target[1], run_name="__main__", alter_sys=True)
            else:
                sys.path.insert(0, str(Path(target[0]).resolve().parent))
                runpy.run_path(target[0], run_name="__main__")
        except IterationCap:
            capped = True
        except MultiProcess:
            kind = MULTI_PROCESS
        except SystemExit as exit_:
            if exit_.code not in (None, 0):
                code = exit_.code if isinstance(exit_.code, int) else 1
                error = f"SystemExit: {exit_.code}"
        except BaseException as raised:  # noqa: BLE001 - the report must be written
            error = f"{type(raised).__name__}: {raised}"
            error_at = _print_user_traceback(raised)
            code = 1
    report = {
        "error": error,
        "error_at": _line(error_at),
        "kind": kind,
        "capped": capped,
        "code": code,
        "pid": os.getpid(),
        "network": network,
        "iterations": recorder.first_steps,
        "explanation": recorder.explanation,
        "backwards": [
            {k: v for k, v in b.items() if k not in ("nodes", "end")} | {"line": _line(b["line"])}
            for b in recorder.backwards
        ],
        "steps": [s | {"line": _line(s["line"])} for s in recorder.steps],
        "warnings": recorder.warnings[:50],
    }
    Path(report_path).write_text(json.dumps(report, default=str), encoding="utf-8")
    return code


def _options(argv: list[str]) -> tuple[str, dict, list[str]]:
    report, rest = argv[0], argv[1:]
    options = {"iterations": None, "allow_network": False}
    while rest and rest[0].startswith("--"):
        flag = rest.pop(0)
        if flag == "--iterations":
            options["iterations"] = int(rest.pop(0))
        elif flag == "--allow-network":
            options["allow_network"] = True
        elif flag == "--":
            break
    return report, options, rest


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
