"""What the shape probe may run of a file: the module class and what it needs, nothing else.

The probe executes user code, so it executes as little as possible: the imports the
target class uses, the class itself, and the top-level functions, classes and plain
constants it reaches, transitively.  Everything else is blanked out: the
`if __name__ == "__main__":` block, top-level calls (`os.system(...)`, `train()`),
assignments whose value calls anything but a class or function kept here or a known
pure constructor, loops, `with` blocks.  Dropped lines become empty lines, so every
line keeps its number and a traceback from the probe points at the user's own line.

Standard library only: the probe worker loads this file by path into the user's
interpreter, where torch-lsp is not installed.
"""
from __future__ import annotations

import ast
import builtins

# Calls that may appear in a kept constant's value: they build values and touch nothing.
PURE_CALLS = frozenset({
    "dict", "list", "tuple", "set", "frozenset", "int", "float", "bool", "str", "range", "len",
    "min", "max", "abs", "round", "sum", "sorted", "zip", "enumerate", "reversed", "divmod", "pow",
    "math.sqrt", "math.ceil", "math.floor", "math.log", "math.log2", "math.prod", "math.exp",
    "torch.device", "torch.Size", "dataclasses.field", "field", "namedtuple", "collections.namedtuple",
    "typing.NamedTuple", "TypeVar", "typing.TypeVar", "partial", "functools.partial",
})
BUILTIN_NAMES = frozenset(dir(builtins))


def dotted_name(node: ast.AST) -> str | None:
    """`a.b.c` for a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def names_read(node: ast.AST) -> set[str]:
    """Every bare name the code of `node` reads (the roots of attribute chains included)."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def bound_names(stmt: ast.stmt) -> set[str]:
    """The top-level names a kept-able statement binds."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return {(alias.asname or alias.name).split(".")[0] for alias in stmt.names if alias.name != "*"}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    if isinstance(stmt, ast.Try):
        return set().union(*(bound_names(s) for s in stmt.body))
    return set()


def calls_only(node: ast.AST, allowed_call) -> bool:
    """`node` makes no call but those `allowed_call` accepts, and holds nothing that runs
    later or elsewhere (a lambda, `await`, `yield`, a walrus)."""
    for inner in ast.walk(node):
        if isinstance(inner, (ast.Lambda, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)):
            return False
        if isinstance(inner, ast.Call) and not allowed_call(inner):
            return False
    return True


def is_pure_value(value: ast.AST | None, definitions: set[str]) -> bool:
    """A value computed without side effects: literals, names, arithmetic, and calls only to
    classes and functions of this file (kept with it) or to known pure constructors."""
    def allowed(call: ast.Call) -> bool:
        name = dotted_name(call.func)
        return name is not None and (name in PURE_CALLS or name in definitions)

    return value is None or calls_only(value, allowed)


def is_import_block(stmt: ast.Try) -> bool:
    """`try: import x` / `except ImportError: x = None`: an optional import."""
    parts = stmt.body + [s for handler in stmt.handlers for s in handler.body] + stmt.orelse
    return all(isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass, ast.Assign)) for s in parts) and not stmt.finalbody


def candidate_statements(tree: ast.Module) -> dict[str, list[ast.stmt]]:
    """Top-level statements the probe may keep, by the names they bind."""
    definitions = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    by_name: dict[str, list[ast.stmt]] = {}
    for stmt in tree.body:
        keepable = (
            isinstance(stmt, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            or (isinstance(stmt, ast.Assign) and is_pure_value(stmt.value, definitions))
            or (isinstance(stmt, ast.AnnAssign) and is_pure_value(stmt.value, definitions))
            or (isinstance(stmt, ast.Try) and is_import_block(stmt))
        )
        if keepable:
            for name in bound_names(stmt):
                by_name.setdefault(name, []).append(stmt)
    return by_name


def needed_statements(tree: ast.Module, roots: set[str]) -> list[ast.stmt]:
    """The top-level statements that `roots` (class names, names an input expression reads)
    reach, transitively, in file order.  `from __future__` imports are always kept."""
    by_name = candidate_statements(tree)
    kept: dict[int, ast.stmt] = {}
    pending = list(roots)
    seen: set[str] = set()
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for stmt in by_name.get(name, ()):
            if id(stmt) not in kept:
                kept[id(stmt)] = stmt
                pending.extend(names_read(stmt) - BUILTIN_NAMES)
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__":
            kept[id(stmt)] = stmt
    return sorted(kept.values(), key=lambda s: s.lineno)


def first_line(stmt: ast.stmt) -> int:
    decorators = getattr(stmt, "decorator_list", None) or []
    return min([stmt.lineno] + [d.lineno for d in decorators])


def probe_program(source: str, roots: set[str] | None) -> str:
    """`source` with every line blanked except those of the statements `roots` need (None:
    everything a module may keep, for a workspace file the probed one imports)."""
    tree = ast.parse(source)
    if roots is None:
        roots = set(candidate_statements(tree))
    lines = source.splitlines(keepends=True)
    keep = [False] * len(lines)
    for stmt in needed_statements(tree, roots):
        for number in range(first_line(stmt), (stmt.end_lineno or stmt.lineno) + 1):
            keep[number - 1] = True
    return "".join(line if keep[i] else "\n" for i, line in enumerate(lines))


# -- module-level scripts ------------------------------------------------------------------
# torch functions a top-level statement may call when the probe runs a script: anything under
# `torch` except what reads or writes files, reaches the network or another device or process.
DENIED_TORCH = ("torch.load", "torch.save", "torch.hub", "torch.cuda", "torch.distributed",
                "torch.multiprocessing", "torch.utils", "torch.backends", "torch.onnx", "torch.jit",
                "torch.compile", "torch.export", "torch.set_default", "torch.ops", "torch.library",
                "torch.classes", "torch.from_file", "torch.package", "torch.profiler", "torch.mps",
                "torch.xpu", "torch.npu", "torch.accelerator")
# Tensor and module methods that leave the meta device or the process.
DENIED_METHODS = frozenset({"cuda", "to", "cpu", "numpy", "tolist", "item", "pin_memory", "share_memory_",
                            "load_state_dict", "save", "tofile", "mps", "xpu"})


def torch_aliases(tree: ast.Module) -> dict[str, str]:
    """Top-level names bound to torch and its members: `nn` -> `torch.nn`, `F` -> ..."""
    aliases: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name.split(".")[0] == "torch":
                    aliases[alias.asname or "torch"] = alias.name if alias.asname else "torch"
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.module.split(".")[0] == "torch" \
                and not stmt.level:
            for alias in stmt.names:
                aliases[alias.asname or alias.name] = f"{stmt.module}.{alias.name}"
    return aliases


class ScriptStatements:
    """Which top-level statements of a script the probe may run: those that only build and
    combine tensors and modules (torch calls, the file's classes, methods of values built so
    far), each reading only names bound by statements kept before it."""

    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.aliases = torch_aliases(tree)
        self.classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
        self.definitions = set(candidate_statements(tree))
        self.built: set[str] = set()  # names bound by kept top-level statements

    def allowed_call(self, call: ast.Call) -> bool:
        name = dotted_name(call.func)
        if name is None:
            # A method of a computed value (`torch.fft.rfft(x).abs()`, `(a + b).sum()`): the
            # calls inside the receiver are checked on their own.
            return isinstance(call.func, ast.Attribute) and call.func.attr not in DENIED_METHODS
        root, _, rest = name.partition(".")
        if root in self.aliases:
            qualified = self.aliases[root] + ("." + rest if rest else "")
            return not qualified.startswith(DENIED_TORCH) and name.rsplit(".", 1)[-1] not in DENIED_METHODS
        if root in self.built:
            return not rest or rest.rsplit(".", 1)[-1] not in DENIED_METHODS
        return name in self.classes or name in PURE_CALLS

    def allowed(self, stmt: ast.stmt) -> bool:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
            return False
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            return False  # a docstring
        if not calls_only(stmt, self.allowed_call):
            return False
        known = self.built | set(self.aliases) | self.definitions | BUILTIN_NAMES
        return names_read(stmt) <= known

    def kept(self) -> list[ast.stmt]:
        kept = []
        for stmt in self.tree.body:
            if self.allowed(stmt):
                kept.append(stmt)
                self.built |= bound_names(stmt) if not isinstance(stmt, ast.AugAssign) else set()
        return kept


def script_statements(source: str) -> tuple[ast.Module, list[ast.stmt]]:
    """The file's definitions (what its kept statements reach) and the top-level tensor
    statements to run, in order."""
    tree = ast.parse(source)
    statements = ScriptStatements(tree).kept()
    roots = set().union(*(names_read(s) for s in statements)) if statements else set()
    definitions = needed_statements(tree, roots)
    return tree, sorted(definitions + statements, key=lambda s: s.lineno)
