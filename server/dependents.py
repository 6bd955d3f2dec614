"""Which open documents import a file: they are checked again when it changes.

`train.py` imports `GPT` from `model.py`; its shapes and its TL501 findings depend on
`model.py`'s text.  When `model.py` is edited or saved, the open documents whose imports
resolve to it (with the shape pass's own resolver, so both agree on what an import
means) are the ones whose checks are stale.
"""
from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.resolver import WorkspaceResolver


def imported_modules(tree: ast.Module) -> set[str]:
    """Dotted names of the absolute imports of a module, at any depth."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def imports_file(analysis: "Analysis", path: str, resolver: "WorkspaceResolver") -> bool:
    """Whether one of the analysed document's imports resolves to the file at `path`."""
    if analysis.path is None or os.path.abspath(analysis.path) == os.path.abspath(path):
        return False
    target = os.path.abspath(path)
    return any(found is not None and os.path.abspath(found) == target
               for found in (resolver.find(module, analysis.path) for module in imported_modules(analysis.tree)))


def importers_of(path: str, analyses: Iterable[tuple[str, "Analysis"]], resolver: "WorkspaceResolver") -> list[str]:
    """The uris, among (uri, analysis) pairs of open documents, of those importing `path`."""
    return [uri for uri, analysis in analyses if imports_file(analysis, path, resolver)]
