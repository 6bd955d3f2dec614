"""What replaces a deprecated or non-public API use, as text edits on `ast` spans.

A *plan* is decided from `ast` facts alone (cheap: the rule titles its fix with it) and
says which spans of the source get which text, and which top-level package must be
imported for the new text to resolve.  New names are written the way the file already
reaches them: through the alias the use itself goes through (`import torch as T;
T.qr(a)` -> `T.linalg.qr(a)`), else through the import binding the longest prefix of the
new name that is visible there (`from torchvision import models` -> `models.X`), else as
the full name with `import <package>` added.  A name imported with `from ... import` is
renamed in its import statement and at every use, so no second import appears.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from torch_lsp.diagnostics.api.catalogue import DEPRECATED, NON_PUBLIC
from torch_lsp.diagnostics.api.uses import ApiUse
from torch_lsp.name_resolution import ImportedName, imported_names, rebound_names, references, resolves
from torch_lsp.syntax_nodes import argument, keyword

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

Span = tuple[int, int, int, int]  # ast positions: line, byte column, end line, end byte column


@dataclass
class Plan:
    title: str
    safety: str = "safe"
    edits: list[tuple[Span, str]] = field(default_factory=list)
    import_module: "str | AddedName | None" = None  # `import <this>` is needed where `at` is, or a name added
    at: ast.AST | None = None


def span_of(node: ast.AST) -> Span:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def segment(analysis: "Analysis", node: ast.AST) -> str:
    """The exact source of `node` (several lines included)."""
    lines = analysis.lines
    start = lines.offset_of_ast(node.lineno, node.col_offset)
    end = lines.offset_of_ast(node.end_lineno, node.end_col_offset)
    return analysis.source[start:end]


# ------------------------------------------------------------------ writing a name
def spelled(analysis: "Analysis", qualname: str, at: ast.AST, hint: ast.AST | None = None) -> tuple[str, str | None]:
    """How to write `qualname` at `at`, and the package to import when nothing reaches it."""
    root = hint
    while isinstance(root, ast.Attribute):
        root = root.value
    if isinstance(root, ast.Name):
        target = resolves(analysis, root.id)
        if target and _is_prefix(target, qualname) and not _is_bare_function(analysis, root.id):
            return root.id + qualname[len(target):], None
    best: tuple[int, str] | None = None
    for imported in imported_names(analysis):
        local, target = _binding(imported)
        if not _is_prefix(target, qualname) or resolves(analysis, local) != target or not _visible(analysis, imported, at):
            continue
        if best is None or len(target) > best[0]:
            best = (len(target), local + qualname[len(target):])
    if best is not None:
        return best[1], None
    joined = _join_from_import(analysis, qualname, at)
    if joined is not None:
        return joined
    return qualname, qualname.split(".")[0]


@dataclass(frozen=True)
class AddedName:
    """A name added to an existing `from package import ...` (`, dataloader` after its last name)."""

    at: Span
    text: str


def _join_from_import(analysis: "Analysis", qualname: str, at: ast.AST) -> tuple[str, AddedName] | None:
    """`from torch.utils.data import _utils` above: `dataloader.default_collate`, with
    `dataloader` added to that import, rather than a second way of importing torch."""
    best = None
    for imported in imported_names(analysis):
        stmt = imported.stmt
        if (isinstance(stmt, ast.ImportFrom) and qualname.startswith(stmt.module + ".")
                and _visible(analysis, imported, at) and (best is None or len(stmt.module) > len(best.module))):
            best = stmt
    if best is None:
        return None
    rest = qualname[len(best.module) + 1:]
    name = rest.split(".")[0]
    if name in analysis.imports or name in rebound_names(analysis):
        return None
    last = best.names[-1]
    return rest, AddedName((last.end_lineno, last.end_col_offset, last.end_lineno, last.end_col_offset), f", {name}")


def _is_bare_function(analysis: "Analysis", name: str) -> bool:
    # `from torch import qr` binds a function: `qr.linalg` is no way to reach `torch.linalg`.
    target = analysis.imports.get(name, "")
    return target in DEPRECATED or target in NON_PUBLIC


def _binding(imported: ImportedName) -> tuple[str, str]:
    """(local name, what it names) for one imported name."""
    alias = imported.alias
    if isinstance(imported.stmt, ast.Import) and not alias.asname:
        root = alias.name.split(".")[0]
        return root, root
    return alias.asname or alias.name, imported.qualname


def _is_prefix(target: str, qualname: str) -> bool:
    return qualname == target or qualname.startswith(target + ".")


def _visible(analysis: "Analysis", imported: ImportedName, at: ast.AST) -> bool:
    """The import has run when `at` runs: a module-level import above it, or any module-level
    import for code inside a function, or an import above it in the same function."""
    where = analysis.context(imported.stmt).function
    here = analysis.context(at).function
    if where.is_module:
        return not here.is_module or imported.stmt.lineno < at.lineno
    return where is here and imported.stmt.lineno < at.lineno


# ----------------------------------------------------------------- plans per use
def replacement_plan(analysis: "Analysis", use: ApiUse) -> Plan | None:
    """The fix of a TL704/TL706 finding, or None when no exact rewrite is known."""
    api = use.api
    new = NON_PUBLIC.get(api.qualname) or api.replacement
    if new is None:
        return None
    drop_in = api.drop_in or api.qualname in NON_PUBLIC
    if use.kind == "import":
        return _import_plan(analysis, use.imported, new) if drop_in else None
    if use.kind == "method":
        return _method_plan(analysis, use)
    node = use.reference.node
    if isinstance(node, ast.Name) and drop_in:
        # A name from `from ... import`: its import statement is what changes.
        imported = _import_of(analysis, node.id)
        return _import_plan(analysis, imported, new) if imported is not None else None
    if drop_in:
        text, package = spelled(analysis, new, node, node)
        return Plan(f"Replace with `{text}`", edits=[(span_of(node), text)], import_module=package, at=node)
    special = _SPECIAL.get(api.qualname)
    if special is None:
        return None
    if use.kind == "call":
        return special(analysis, use.reference.call, new)
    if api.qualname in ("torch.cuda.amp.custom_fwd", "torch.cuda.amp.custom_bwd") and _is_decorator(analysis, node):
        text, package = spelled(analysis, new, node, node)
        text = f'{text}(device_type="cuda")'
        return Plan(f"Replace with `{text}`", edits=[(span_of(node), text)], import_module=package, at=node)
    return None


def _import_of(analysis: "Analysis", name: str) -> ImportedName | None:
    found = [imp for imp in imported_names(analysis)
             if isinstance(imp.stmt, ast.ImportFrom) and (imp.alias.asname or imp.alias.name) == name]
    return found[0] if len(found) == 1 else None


def _import_plan(analysis: "Analysis", imported: ImportedName, new: str) -> Plan | None:
    """`from old.module import name` -> `from new.module import new_name`, when every name of
    the statement moves to the same module; uses of a renamed name are renamed too."""
    stmt = imported.stmt
    if not isinstance(stmt, ast.ImportFrom):
        return None
    new_module = None
    edits: list[tuple[Span, str]] = []
    for alias in stmt.names:
        old = f"{stmt.module}.{alias.name}"
        api = DEPRECATED.get(old)
        target = NON_PUBLIC.get(old) or (api.replacement if api is not None and api.drop_in else None)
        if target is None:
            return None
        module, _, name = target.rpartition(".")
        if new_module not in (None, module):
            return None
        new_module = module
        if name != alias.name:
            edits.append(((alias.lineno, alias.col_offset, alias.lineno, alias.col_offset + len(alias.name)), name))
            if not alias.asname:
                if resolves(analysis, name) is not None or name in analysis.imports:
                    return None  # would bind a name the file already uses
                for reference in references(analysis).get(old, ()):
                    if isinstance(reference.node, ast.Name) and reference.node.id == alias.name:
                        edits.append((span_of(reference.node), name))
    module_span = _module_span(analysis, stmt)
    if module_span is None or new_module is None:
        return None
    if new_module != stmt.module:
        edits.append((module_span, new_module))
    names = ", ".join(alias.name for alias in stmt.names)
    return Plan(f"Import from `{new_module}` instead of `{stmt.module}`" if new_module != stmt.module
                else f"Import the replacement of `{names}`", edits=edits)


_FROM = re.compile(rb"from\s+")


def _module_span(analysis: "Analysis", stmt: ast.ImportFrom) -> Span | None:
    line = analysis.lines.line_text(stmt.lineno).encode("utf-8")
    match = _FROM.match(line, stmt.col_offset)
    if match is None or not line[match.end():].startswith(stmt.module.encode()):
        return None
    return stmt.lineno, match.end(), stmt.lineno, match.end() + len(stmt.module.encode())


def _is_decorator(analysis: "Analysis", node: ast.AST) -> bool:
    stmt = analysis.statement_of(node)
    return isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node in stmt.decorator_list


def _method_plan(analysis: "Analysis", use: ApiUse) -> Plan | None:
    call = use.node
    method = call.func.attr
    if method == "ger" and len(call.args) == 1 and not call.keywords:
        start = call.func.end_col_offset - len("ger")
        return Plan("Replace `.ger(...)` with `.outer(...)`",
                    edits=[((call.func.end_lineno, start, call.func.end_lineno, call.func.end_col_offset), "outer")])
    if method in ("qr", "cholesky") and not call.args and not call.keywords:
        text, package = spelled(analysis, f"torch.linalg.{method}", call)
        new = f"{text}({segment(analysis, call.func.value)})"
        return Plan(f"Replace with `{new}`" if len(new) < 60 else f"Use `{text}`", edits=[(span_of(call), new)],
                    import_module=package, at=call)
    return None


# ------------------------------------------------------------- exact rewrites
def _simple_args(call: ast.Call) -> bool:
    return not any(isinstance(a, ast.Starred) for a in call.args) and not any(k.arg is None for k in call.keywords)


def _rewrite(analysis: "Analysis", call: ast.Call, func: str, args: list[str], suffix: str = "",
             safety: str = "safe") -> Plan:
    text = f"{func}({', '.join(args)}){suffix}"
    title = f"Replace with `{text}`" if len(text) <= 60 and "\n" not in text else f"Use `{func}`"
    return Plan(title, safety, [(span_of(call), text)])


def _with_func(analysis: "Analysis", call: ast.Call, new: str) -> tuple[str, str | None]:
    return spelled(analysis, new, call, call.func)


def _literal(node: ast.AST | None) -> object:
    return node.value if isinstance(node, ast.Constant) else _MISSING


_MISSING = object()


def _qr(analysis, call, new):
    source = argument(call, 0, "input")
    some = argument(call, 1, "some")
    if source is None or not _simple_args(call) or len(call.args) + len(call.keywords) > (2 if some is not None else 1):
        return None
    func, package = _with_func(analysis, call, new)
    args = [segment(analysis, source)]
    if some is not None:
        value = _literal(some)
        if value is False:
            args.append('mode="complete"')
        elif value is not True:
            return None
    return _located(_rewrite(analysis, call, func, args), package, call)


def _cholesky(analysis, call, new):
    source = argument(call, 0, "input")
    upper = argument(call, 1, "upper")
    if source is None or not _simple_args(call) or len(call.args) + len(call.keywords) > (2 if upper is not None else 1):
        return None
    value = _literal(upper) if upper is not None else False
    if value not in (True, False):
        return None
    func, package = _with_func(analysis, call, new)
    return _located(_rewrite(analysis, call, func, [segment(analysis, source)], ".mH" if value else ""), package, call)


def _chain_matmul(analysis, call, new):
    if not _simple_args(call) or not call.args or any(k.arg != "out" for k in call.keywords):
        return None
    func, package = _with_func(analysis, call, new)
    args = ["[" + ", ".join(segment(analysis, a) for a in call.args) + "]"]
    args += [f"out={segment(analysis, k.value)}" for k in call.keywords]
    return _located(_rewrite(analysis, call, func, args), package, call)


def _range(analysis, call, new):
    """`torch.range` includes `end`, `torch.arange` does not: `end` moves by one `step`."""
    if not _simple_args(call) or len(call.args) > 3:
        return None
    positional = list(call.args)
    end = keyword(call, "end").value if keyword(call, "end") else (positional[1] if len(positional) >= 2 else
                                                                 positional[0] if len(positional) == 1 else None)
    step_node = keyword(call, "step").value if keyword(call, "step") else (positional[2] if len(positional) == 3 else None)
    if end is None:
        return None
    step = 1 if step_node is None else _int_literal(step_node)
    if step is None:
        return None
    end_value = _int_literal(end)
    safety = "safe"
    if end_value is not None:
        new_end = str(end_value + step)
    elif step == 1 and isinstance(end, ast.BinOp) and isinstance(end.op, ast.Sub) and _int_literal(end.right) == 1:
        new_end, safety = segment(analysis, end.left), "unsafe"
    elif step == 1:
        new_end, safety = f"{segment(analysis, end)} + 1", "unsafe"
    else:
        return None
    func, package = _with_func(analysis, call, new)
    edits = [(span_of(call.func), func), (span_of(end), new_end)]
    return Plan(f"Replace with `torch.arange` (end + {step})" if safety == "safe"
                else "Replace with `torch.arange`, `end` + 1 (integer bounds only)",
                safety, edits, package, call)


def _int_literal(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _int_literal(node.operand)
        return -inner if inner is not None else None
    return None


def _device_first(device: str):
    def rewrite(analysis, call, new):
        # The old signatures start with other parameters (`enabled`, `init_scale`): only keywords move over.
        if call.args or not _simple_args(call):
            return None
        func, package = _with_func(analysis, call, new)
        args = [f'"{device}"'] + [segment(analysis, k) for k in call.keywords]
        return _located(_rewrite(analysis, call, func, args), package, call)
    return rewrite


def _device_keyword(analysis, call, new):
    if call.args or not _simple_args(call):
        return None
    func, package = _with_func(analysis, call, new)
    args = ['device_type="cuda"'] + [segment(analysis, k) for k in call.keywords]
    return _located(_rewrite(analysis, call, func, args), package, call)


def _located(plan: Plan, package: str | None, at: ast.AST) -> Plan:
    plan.import_module, plan.at = package, at
    return plan


_SPECIAL = {
    "torch.qr": _qr,
    "torch.cholesky": _cholesky,
    "torch.chain_matmul": _chain_matmul,
    "torch.range": _range,
    "torch.cuda.amp.autocast": _device_first("cuda"),
    "torch.cpu.amp.autocast": _device_first("cpu"),
    "torch.cuda.amp.GradScaler": _device_first("cuda"),
    "torch.cuda.amp.custom_fwd": _device_keyword,
    "torch.cuda.amp.custom_bwd": _device_keyword,
}
