"""The analysis of another file of the user's project, for facts that follow imports.

`from utils.torch_utils import smart_inference_mode` in `segment/val.py`: the module is
looked for beside the importer, then in the folders above it (scripts in a sub-folder put
the project root on `sys.path`), and analysed once per (path, size, mtime) by the shapes
engine's `WorkspaceResolver`.  Analysing that file may follow its own imports; a module
already being analysed on this thread answers None, so files importing each other end.
"""
from __future__ import annotations

import ast
import os
import threading
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Iterator

from torch_lsp import memos
from torch_lsp.shapes.resolver import WorkspaceResolver

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

# Folders above the importer searched for an imported module (a script deep in
# `projects/x/tools/` importing the repository's package).
_ANCESTOR_LEVELS = 6
# Imports followed from one file through others, at most.
_MAX_CHAIN = 4


class _ProjectFiles(WorkspaceResolver):
    """A `WorkspaceResolver` that also looks in the folders above the importer and in a
    `src/` folder beside each (the `src` layout puts the package there)."""

    def find(self, module: str, importer_path: str | None) -> str | None:
        found = super().find(module, importer_path)
        if found is not None or module.startswith(".") or not importer_path or importer_path in ("<stdin>", "-"):
            return found
        folder = os.path.dirname(os.path.abspath(importer_path))
        parts = module.split(".")
        for _ in range(_ANCESTOR_LEVELS + 1):
            for root in (folder, os.path.join(folder, "src")):
                base = os.path.join(root, *parts)
                for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                    if os.path.isfile(candidate) and os.path.abspath(candidate) != os.path.abspath(importer_path):
                        return candidate
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
        return None


_PROJECT_FILES = _ProjectFiles()
memos.register(_PROJECT_FILES.forget)
_IN_PROGRESS = threading.local()


# While set: what `workspace_analysis` gave, by (module, importer path), for `reading_files`.
_READ: ContextVar[dict | None] = ContextVar("project files read", default=None)


@contextmanager
def reading_files() -> Iterator[dict]:
    """Collects the other files read in this block: (module, importer path) -> the analysis
    `workspace_analysis` gave (None: none).  What was computed from them holds while the
    same calls give the same analyses (`rule_parts` keeps findings so)."""
    read: dict = {}
    token = _READ.set(read)
    try:
        yield read
    finally:
        _READ.reset(token)
        outer = _READ.get()
        if outer is not None:  # what was read for this block was read for the enclosing one too
            for key, found in read.items():
                outer.setdefault(key, found)


def workspace_analysis(module: str, importer_path: str | None) -> "Analysis | None":
    """The analysis of the project file `module` names, seen from `importer_path`; None when
    there is none, for PyTorch's own modules, or while it is being analysed further up this
    chain of imports."""
    found = _workspace_analysis(module, importer_path)
    read = _READ.get()
    if read is not None:
        read.setdefault((module, importer_path), found)
    return found


def _workspace_analysis(module: str, importer_path: str | None) -> "Analysis | None":
    if module.split(".")[0] in ("torch", "torchvision"):
        return None
    busy: set[str] = getattr(_IN_PROGRESS, "modules", None) or set()
    _IN_PROGRESS.modules = busy
    key = f"{module}@{os.path.dirname(os.path.abspath(importer_path or '.'))}"
    if key in busy or len(busy) >= _MAX_CHAIN:
        return None
    busy.add(key)
    try:
        return _PROJECT_FILES.analysis_of(module, importer_path)
    finally:
        busy.discard(key)


def project_definition(analysis: "Analysis", func: ast.AST) -> "tuple[Analysis, ast.AST] | None":
    """The top-level class or function a name refers to, with the analysis of its file: in
    this file, or imported from a workspace file (`from model import Tacotron2`)."""
    if isinstance(func, ast.Name) and func.id not in analysis.imports:
        return _top_level(analysis, func.id) or _local(analysis, func)
    qualname = analysis.qualname(func)
    if not qualname or "." not in qualname:
        return None
    module, name = qualname.rsplit(".", 1)
    from torch_lsp.analysis import is_torch_ecosystem_module

    if is_torch_ecosystem_module(module):
        return None
    other = workspace_analysis(module, analysis.path)
    return _top_level(other, name) if other is not None else None


def _local(analysis: "Analysis", name: ast.Name) -> "tuple[Analysis, ast.AST] | None":
    """A class or function defined in the body of the function that reads `name`, before it
    (`class ProjLayer(nn.Module): ...` inside `__init__`, then `self.proj = ProjLayer(w)`)."""
    scope = analysis.parents.get(name)
    while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        scope = analysis.parents.get(scope)
    if scope is None:
        return None
    found = [node for node in scope.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))
             and node.name == name.id and node.lineno < name.lineno]
    return (analysis, found[-1]) if found else None


def _top_level(analysis: "Analysis", name: str) -> "tuple[Analysis, ast.AST] | None":
    if analysis.tree is None:
        return None
    for node in analysis.tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name:
            return analysis, node
    return None
