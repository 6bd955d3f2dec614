"""Every use and every import of a library name in a file, resolved through the imports.

`import torch as T; T.solve(a, b)`, `from torch import load; load(f)` and
`from torch.cuda.amp import autocast` all name `torch.solve`, `torch.load` and
`torch.cuda.amp.autocast`; rules that look for an API by its qualified name (TL7xx) ask
`references(analysis)[qualname]` and get each place it is used, with the call when it is
called.  A name the file also binds some other way (`def load(...)`, `solve = ...`, a
parameter) is not resolved at all: which binding a use sees is not known, and a rule that
is unsure stays silent.  Computed once per analysed version (`analysis.facts`).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@dataclass(frozen=True)
class Reference:
    """A use of `qualname`: `node` is the `Name` or `Attribute` that names it; `call` the call
    when the node is the called function (`T.solve` in `T.solve(a, b)`)."""

    qualname: str
    node: ast.expr
    call: ast.Call | None


@dataclass(frozen=True)
class ImportedName:
    """One name an import statement binds: `alias` of `stmt`, naming `qualname`."""

    qualname: str
    stmt: ast.Import | ast.ImportFrom
    alias: ast.alias


_REFERENCES: FactKey[dict[str, list[Reference]]] = FactKey("name_resolution.references")
_IMPORTED: FactKey[list[ImportedName]] = FactKey("name_resolution.imported_names")
_REBOUND: FactKey[frozenset[str]] = FactKey("name_resolution.rebound")


def references(analysis: "Analysis") -> dict[str, list[Reference]]:
    """{qualified name: its uses in source order}; every prefix of a dotted use counts
    (`torch.cuda.amp.autocast()` is also a use of `torch.cuda.amp`)."""
    return analysis.facts.get_or_compute(_REFERENCES, lambda: _collect_references(analysis))


def imported_names(analysis: "Analysis") -> list[ImportedName]:
    """Each name bound by an `import` or `from ... import` (relative imports left out)."""
    return analysis.facts.get_or_compute(_IMPORTED, lambda: _collect_imported(analysis))


def rebound_names(analysis: "Analysis") -> frozenset[str]:
    """Names the file binds other than by an import: definitions, assignments, parameters,
    loop and `with` targets."""
    return analysis.facts.get_or_compute(_REBOUND, lambda: _collect_rebound(analysis.tree))


def resolves(analysis: "Analysis", name: str) -> str | None:
    """What a bare name refers to through the imports, None when not imported or rebound."""
    if name in rebound_names(analysis):
        return None
    return analysis.imports.get(name)


def _collect_references(analysis: "Analysis") -> dict[str, list[Reference]]:
    found: dict[str, list[Reference]] = {}
    called: dict[int, ast.Call] = {}
    stack: list[ast.AST] = [analysis.tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Call):
            called[id(node.func)] = node
        elif isinstance(node, (ast.Attribute, ast.Name)):
            chain: list[ast.Attribute] = []
            root: ast.AST = node
            while isinstance(root, ast.Attribute):
                chain.append(root)
                root = root.value
            target = resolves(analysis, root.id) if isinstance(root, ast.Name) else None
            if target is None:
                if isinstance(root, ast.Name):
                    continue
                stack.append(root)
                continue
            qualname = target
            found.setdefault(qualname, []).append(Reference(qualname, root, called.get(id(root))))
            for attribute in reversed(chain):
                qualname = f"{qualname}.{attribute.attr}"
                found.setdefault(qualname, []).append(Reference(qualname, attribute, called.get(id(attribute))))
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))
    return found


def _collect_imported(analysis: "Analysis") -> list[ImportedName]:
    bound = []
    for node in ast.walk(analysis.tree):
        if isinstance(node, ast.Import):
            bound += [ImportedName(alias.name, node, alias) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            bound += [ImportedName(f"{node.module}.{alias.name}", node, alias) for alias in node.names
                      if alias.name != "*"]
    bound.sort(key=lambda item: (item.alias.lineno, item.alias.col_offset))
    return bound


def _collect_rebound(tree: ast.AST) -> frozenset[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
    return frozenset(names)
