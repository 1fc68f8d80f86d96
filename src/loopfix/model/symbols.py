"""Static facts about one module: imports, classes, functions, and which names are modules.

The loop model asks these questions when a value's kind cannot be followed through the code
itself, e.g. a global `model` read inside a function, or `self.rnn` inside `forward`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from loopfix.model import shapes
from loopfix.model.index import TreeIndex, index_tree
from loopfix.model.shapes import Shape

# Methods that only modules (never tensors) have: seeing one called on a name is evidence
# that the name holds a module even when its class is defined elsewhere.
MODULE_ONLY_METHODS = {"parameters", "named_parameters", "modules", "children", "buffers", "train"}

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

# Module methods that return the module itself (`Net().to(device)`), and calls that return the
# module they wrap (`nn.DataParallel(net)`): both keep the module's identity and forward.
MODULE_PLUMBING = frozenset(
    {"to", "cuda", "cpu", "train", "eval", "float", "double", "half", "bfloat16",
     "requires_grad_", "apply", "share_memory", "type", "to_empty"}
)  # fmt: skip
MODULE_WRAPPERS = frozenset(
    {"DataParallel", "DistributedDataParallel", "compile", "convert_sync_batchnorm"}
)


@dataclass
class ClassInfo:
    node: ast.ClassDef
    base_names: list[str]
    is_module: bool = False
    methods: dict[str, FunctionNode] = field(default_factory=dict)
    attributes: dict[str, ast.expr] = field(default_factory=dict)


@dataclass
class Symbols:
    imports: dict[str, str] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    functions: dict[str, FunctionNode] = field(default_factory=dict)
    globals: dict[str, ast.expr] = field(default_factory=dict)
    module_evidence: set[str] = field(default_factory=set)

    def qualify(self, node: ast.expr) -> str | None:
        """`nn.LSTM` -> `torch.nn.LSTM` when `nn` was imported from torch; None if not dotted."""
        dotted = dotted_name(node)
        if dotted is None:
            return None
        root, _, rest = dotted.partition(".")
        base = self.imports.get(root)
        if base is None:
            return dotted
        return f"{base}.{rest}" if rest else base

    def static_shape(self, node: ast.expr, depth: int = 0) -> Shape:
        """Shape of an expression that constructs something, without running any flow."""
        if depth > 4:
            return None
        if isinstance(node, ast.Call):
            return self._constructed_shape(node, depth)
        if isinstance(node, ast.Name) and node.id in self.globals:
            return self.static_shape(self.globals[node.id], depth + 1)
        if isinstance(node, ast.List | ast.Tuple):
            return ("modules", shapes.join_all(self.static_shape(e, depth + 1) for e in node.elts))
        if isinstance(node, ast.ListComp):
            return ("modules", self.static_shape(node.elt, depth + 1))
        return None

    def _constructed_shape(self, node: ast.Call, depth: int) -> Shape:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in MODULE_PLUMBING:
            inner = self.static_shape(func.value, depth + 1)
            return inner if shapes.is_module(inner) else None
        qualified = self.qualify(func)
        if qualified is None:
            return None
        name = qualified.rsplit(".", 1)[-1]
        if name in MODULE_WRAPPERS and qualified.startswith("torch.") and node.args:
            return self.static_shape(node.args[0], depth + 1)
        if name in self.classes and "." not in qualified:
            info = self.classes[name]
            return shapes.module("custom", name) if info.is_module else None
        if qualified.startswith("torch.nn.") and name[:1].isupper():
            if name == "ModuleList" and node.args:
                return ("modules", shapes.item_shape(self.static_shape(node.args[0], depth + 1)))
            return shapes.module(name)
        return None

    def module_class(self, shape: Shape) -> ClassInfo | None:
        if shapes.is_module(shape) and shape[2] is not None:
            return self.classes.get(shape[2])
        return None

    def class_of(self, shape: Shape) -> ClassInfo | None:
        """The file's class a module or object value is an instance of."""
        name = shapes.class_name(shape)
        return self.classes.get(name) if name is not None else None

    def file_bases(self, info: ClassInfo) -> list[ClassInfo]:
        return [
            self.classes[b] for b in info.base_names if b in self.classes and b != info.node.name
        ]

    def method(self, info: ClassInfo, name: str, depth: int = 0) -> FunctionNode | None:
        """`name` as the class or one of its bases in the file defines it."""
        if name in info.methods:
            return info.methods[name]
        for base in self.file_bases(info) if depth < 8 else []:
            found = self.method(base, name, depth + 1)
            if found is not None:
                return found
        return None


def dotted_name(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def collect_symbols(tree: ast.Module, index: TreeIndex | None = None) -> Symbols:
    index = index or index_tree(tree)
    symbols = Symbols()
    for node in index.imports:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    symbols.imports[alias.asname] = alias.name
                else:
                    root = alias.name.split(".")[0]
                    symbols.imports[root] = root
        elif node.module and node.level == 0:
            for alias in node.names:
                symbols.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in index.attribute_calls:
        if node.func.attr in MODULE_ONLY_METHODS:
            receiver = node.func.value
            name = receiver.attr if isinstance(receiver, ast.Attribute) else None
            name = receiver.id if isinstance(receiver, ast.Name) else name
            if name:
                symbols.module_evidence.add(name)
    for node in index.recurrent_calls:
        name = dotted_name(node.func)
        if name:
            symbols.module_evidence.add(name.rpartition(".")[2])
    for statement in tree.body:
        _collect_top_level(symbols, statement)
    _resolve_module_classes(symbols)
    return symbols


def _collect_top_level(symbols: Symbols, statement: ast.stmt) -> None:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        symbols.functions[statement.name] = statement
    elif isinstance(statement, ast.ClassDef):
        symbols.classes[statement.name] = _class_info(statement)
    elif isinstance(statement, ast.Assign):
        for target in statement.targets:
            if isinstance(target, ast.Name):
                symbols.globals[target.id] = statement.value
    elif isinstance(statement, ast.If | ast.With | ast.Try):
        for child in ast.iter_child_nodes(statement):
            if isinstance(child, ast.stmt):
                _collect_top_level(symbols, child)


def _class_info(node: ast.ClassDef) -> ClassInfo:
    info = ClassInfo(node=node, base_names=[dotted_name(b) or "" for b in node.bases])
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
            info.methods[item.name] = item
    init = info.methods.get("__init__")
    if init is not None:
        for statement in ast.walk(init):
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    if _is_self_attribute(target):
                        info.attributes[target.attr] = statement.value
    return info


def _is_self_attribute(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    )


def _resolve_module_classes(symbols: Symbols) -> None:
    changed = True
    while changed:
        changed = False
        for info in symbols.classes.values():
            if info.is_module:
                continue
            for base in info.base_names:
                root = base.split(".")[0]
                qualified = symbols.imports.get(root, root) + base[len(root) :]
                in_file = symbols.classes.get(base)
                if (
                    qualified in {"torch.nn.Module", "torch.nn.modules.module.Module"}
                    or base.endswith("Module")
                    or (in_file is not None and in_file.is_module)
                ):
                    info.is_module = True
                    changed = True
                    break
