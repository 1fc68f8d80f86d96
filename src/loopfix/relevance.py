"""Which files can hold a finding, decided from their text before anything is parsed.

Most files of a repository have no training step in them, and parsing them costs more than the
rest of a check. Every rule is about a backward pass, so a file is analysed only when

- it says a backward pass: a call of something named `*backward*` (`loss.backward()`,
  `accelerator.backward(loss)`), `.backward` or `autograd` (every backward pass is written
  with one of them; `backward compatible` in a comment is not one);
- it is a model module (`def forward`) that changes something in place inside a class, or in
  a module-level function its classes call (LF008 follows `forward` and what it calls): an
  in-place change in a metric or data function beside the models (`total += loss.item()`
  in `evaluate`) does not make the file a model to follow; or a model module that imports,
  by name, a function of a project module that changes something in place (`from utils
  import mask_probs`);
- or a name it imports from a project module does the autograd work for it: the class or
  function imported says `backward` (a custom `torch.autograd.Function` only when it runs a
  backward pass itself: its `def backward(ctx, grad)` is a gradient formula), or calls
  something of its module that does
  (`from utils import update_params`, `from model import Trainer`), also through a package's
  `__init__.py` that re-exports it; a whole module imported (`import utils`) counts when the
  module says `backward`.

The tests read lines and indentation, not a parse: a block is a `def` or `class` line and the
lines indented below it (lines inside a triple-quoted string do not end a block). A file they
get wrong is analysed in vain (a little time), or, for a block whose lines are not indented
below it (a continuation line at column 0), left out; the corpus keeps every finding.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

# every backward pass is written with one of these: a call of something named `*backward*`
# (`loss.backward()`, `accelerator.backward(loss)`, `self.manual_backward(loss)`, a helper
# `backward_step(loss)`), a reference to a tensor's `.backward` (`partial(loss.backward)`), or
# `autograd` (`torch.autograd.grad`); the word in prose or a name (`backward compatible`,
# `backward_hooks: dict`) is not one
_MENTION = re.compile(r"backward\w*\(|\.backward\b|autograd")

# an in-place change: an augmented assignment, an item or slice write, an in-place method
# (`x.add_(`, not `.__init__(`), an in-place activation (`inplace=True`)
_IN_PLACE = re.compile(
    r"(?:\+|-|\*|/|%|@|&|\||\^)=(?!=)|\]\s*=(?!=)|\.[A-Za-z_]\w*[A-Za-z0-9]_\(|inplace"
)
_HEADER = re.compile(r"[ \t]*(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
_CALLED = re.compile(r"\b(\w+)\s*\(")
_WORD = re.compile(r"\w+")
# a custom autograd function (`class GradMultiply(torch.autograd.Function):`), whose
# `def backward(ctx, grad)` is the gradient formula autograd calls, not a backward pass; it
# does autograd work only when its body runs one (`torch.autograd.backward(...)`)
_AUTOGRAD_FUNCTION = re.compile(r"[ \t]*class[ \t]+\w+[ \t]*\([^)]*\bFunction\b")
_BACKWARD_CALL = re.compile(r"\.(?:backward|grad)\s*\(")


@dataclass
class Block:
    """A `def` or `class` and its body: lines `start` (the header) to `end` (exclusive)."""

    kind: str  # "def" or "class"
    name: str
    indent: int
    start: int
    end: int
    parent: int | None  # the enclosing block's index in the list, None at module level


def mentions_autograd(text: str) -> bool:
    """Whether `text` says a backward pass (`_MENTION`)."""
    return _MENTION.search(text) is not None


def blocks(lines: list[str]) -> list[Block]:
    """The file's `def` and `class` blocks, in the order they start (an enclosing block
    before the blocks inside it)."""
    found: list[Block] = []
    open_blocks: list[int] = []
    quote = None  # the quotes of the triple-quoted string a line left open
    for number, line in enumerate(lines):
        if quote is not None:
            if line.count(quote) % 2:
                quote = None
            continue
        stripped = line.lstrip()
        if stripped and not stripped.startswith("#"):
            indent = len(line) - len(stripped)
            while open_blocks and indent <= found[open_blocks[-1]].indent:
                found[open_blocks.pop()].end = number
            header = _HEADER.match(line)
            if header is not None:
                parent = open_blocks[-1] if open_blocks else None
                found.append(Block(header[1], header[2], indent, number, len(lines), parent))
                open_blocks.append(len(found) - 1)
        for triple in ('"""', "'''"):
            if line.count(triple) % 2:
                quote = triple
                break
    return found


def _owners(found: list[Block], count: int) -> list[int | None]:
    """For each line, the innermost block it belongs to."""
    owner: list[int | None] = [None] * count
    for number, block in enumerate(found):  # inner blocks come later and overwrite
        owner[block.start : block.end] = [number] * (block.end - block.start)
    return owner


def _outermost(found: list[Block], number: int) -> int:
    while found[number].parent is not None:
        number = found[number].parent
    return number


def _in_class(found: list[Block], number: int | None) -> bool:
    while number is not None:
        if found[number].kind == "class":
            return True
        number = found[number].parent
    return False


def changes_in_place(text: str) -> bool:
    """Whether a model module (`def forward`) changes something in place inside a class, or
    in a module-level function that its classes call (directly or through other functions of
    the module)."""
    if "def forward" not in text or _IN_PLACE.search(text) is None:
        return False
    lines, found, changed = _changed_blocks(text)
    if any(_in_class(found, block) for block in changed):
        return True
    changing = {found[_outermost(found, block)].name for block in changed}
    if not changing:
        return False
    top = {b.name: b for b in found if b.parent is None}
    called = set()
    for block in top.values():
        if block.kind == "class":
            called |= _calls_in(lines, block)
    reached, frontier = set(), called & top.keys()
    while frontier:  # functions the classes call, and the functions those call
        name = frontier.pop()
        reached.add(name)
        frontier |= (_calls_in(lines, top[name]) & top.keys()) - reached
    return bool(reached & changing)


def in_place_functions(text: str) -> set[str]:
    """The module-level functions of `text` that change something in place (a helper a
    model module in another file imports: `from utils import mask_probs`)."""
    if _IN_PLACE.search(text) is None:
        return set()
    _, found, changed = _changed_blocks(text)
    outermost = (found[_outermost(found, block)] for block in changed)
    return {block.name for block in outermost if block.kind == "def"}


def _changed_blocks(text: str) -> tuple[list[str], list[Block], list[int]]:
    """The lines of `text`, its blocks, and the block each in-place change is in (those at
    the top level, outside any block, left out)."""
    lines = text.split("\n")
    found = blocks(lines)
    owner = _owners(found, len(lines))
    starts = _line_starts(text)
    changed = []
    for match in _IN_PLACE.finditer(text):
        block = owner[bisect.bisect_right(starts, match.start()) - 1]
        if block is not None:
            changed.append(block)
    return lines, found, changed


def _line_starts(text: str) -> list[int]:
    starts = [0]
    position = text.find("\n")
    while position != -1:
        starts.append(position + 1)
        position = text.find("\n", position + 1)
    return starts


def _calls_in(lines: list[str], block: Block) -> set[str]:
    return set(_CALLED.findall("\n".join(lines[block.start + 1 : block.end])))


def autograd_names(text: str) -> set[str]:
    """The module-level classes and functions of a module that do autograd work: those that
    say `backward` or `autograd` (a custom `torch.autograd.Function`: that call `.backward(`
    or `.grad(`), and those that name one of them (a class whose method calls
    the module's `update_params`, a subclass of one)."""
    if not mentions_autograd(text):
        return set()
    lines = text.split("\n")
    top = [b for b in blocks(lines) if b.parent is None]
    bodies = {b.name: "\n".join(lines[b.start : b.end]) for b in top}
    names = {name for name, body in bodies.items() if _does_autograd_work(body)}
    words = {name: set(_WORD.findall(body)) for name, body in bodies.items()}
    grown = True
    while grown:
        more = {name for name in bodies if name not in names and words[name] & names}
        names |= more
        grown = bool(more)
    return names


# `return Net(...)`, `model = models.Net(...)`, `return model`: what a factory builds and
# gives back (the called name, without the module it is named through)
_RETURNED_CALL = re.compile(r"^[ \t]*return[ \t]+(?:[\w.]+\.)?(\w+)[ \t]*\(", re.M)
_BOUND_CALL = re.compile(r"^[ \t]*(\w+)[ \t]*=[ \t]*(?:[\w.]+\.)?(\w+)[ \t]*\(", re.M)
_RETURNED_NAME = re.compile(r"^[ \t]*return[ \t]+(\w+)[ \t]*(?:#.*)?$", re.M)


def returned_calls(text: str) -> dict[str, set[str]]:
    """Module-level function -> the names it calls and returns what they give (`return
    Net(opt)`, or `model = Net(); model.initialize(); return model`): the classes a
    factory builds, when they are classes. A model built in a third module and handed back
    by a factory (`model = CreateModel(opt)` in `train.py`) brings its autograd work to the
    file that calls the factory."""
    lines = text.split("\n")
    found: dict[str, set[str]] = {}
    for block in blocks(lines):
        if block.parent is not None or block.kind != "def":
            continue
        body = "\n".join(lines[block.start + 1 : block.end])
        called = set(_RETURNED_CALL.findall(body))
        returned = set(_RETURNED_NAME.findall(body))
        called |= {name for bound, name in _BOUND_CALL.findall(body) if bound in returned}
        if called:
            found[block.name] = called
    return found


def _does_autograd_work(body: str) -> bool:
    """Whether a class's or function's text says a backward pass (a custom autograd
    function: calls one)."""
    if _AUTOGRAD_FUNCTION.match(body):
        return _BACKWARD_CALL.search(body) is not None
    return mentions_autograd(body)


def defined_names(text: str) -> set[str]:
    """The module-level classes and functions of a module."""
    return {b.name for b in blocks(text.split("\n")) if b.parent is None}
