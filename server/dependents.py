"""Which open documents import a file: they are checked again when it changes.

`train.py` imports `GPT` from `model.py`; its shapes and its TL501 findings depend on
`model.py`'s text.  When `model.py` is edited or saved, the open documents whose imports
resolve to it (with the shape pass's own resolver, so both agree on what an import
means) are the ones whose checks are stale.

This is asked on the event loop at every edit, of every open document: the module names
a document imports are collected once per checked version, on the analysis thread
(`imported_modules`), and only the names that could name the changed file are resolved
(a look at the file system each), so an edit costs a few set look-ups per open document,
not a walk of every open document's tree.
"""
from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:
    from torch_lsp.shapes.resolver import WorkspaceResolver

PACKAGE_FILE = "__init__.py"


def imported_modules(statements: Iterable[ast.stmt]) -> frozenset[str]:
    """Dotted names of the absolute imports among `statements` (an analysis's
    `statements`: every statement of the module, at any depth)."""
    found: set[str] = set()
    for node in statements:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return frozenset(found)


def could_name(module: str, path: str) -> bool:
    """Whether the dotted `module` can resolve to the file at `path` at all: its last part
    is the file's name (`a.b.model` -> `model.py`), or its package folder's for
    `__init__.py`.  Only those are resolved."""
    folder, name = os.path.split(path)
    stem = os.path.basename(folder) if name == PACKAGE_FILE else os.path.splitext(name)[0]
    return module.rpartition(".")[2] == stem


def imports_file(importer_path: str | None, modules: Iterable[str], path: str, resolver: "WorkspaceResolver") -> bool:
    """Whether one of `modules`, imported by the document at `importer_path` (None for an
    untitled buffer: resolved in the workspace roots only), resolves to the file at `path`."""
    target = os.path.abspath(path)
    if importer_path is not None and os.path.abspath(importer_path) == target:
        return False
    for module in modules:
        if could_name(module, path):
            found = resolver.find(module, importer_path)
            if found is not None and os.path.abspath(found) == target:
                return True
    return False


def importers_of(path: str, documents: Iterable[tuple[str, str | None, frozenset[str]]],
                 resolver: "WorkspaceResolver") -> list[str]:
    """The uris, among (uri, file path, imported modules) of open documents, of those
    importing `path`."""
    return [uri for uri, importer_path, modules in documents if imports_file(importer_path, modules, path, resolver)]
