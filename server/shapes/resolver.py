"""Following imported model classes into other files of the workspace.

`from model import GPT` in `train.py`: the shape pass needs `GPT`'s `__init__` and
`forward`.  It asks an `ImportResolver` for the `Analysis` of module `model` as seen
from the importing file.  The resolver is the seam between the shape engine and
whatever finds files:

- `WorkspaceResolver` (here) maps a dotted module name to `<folder>/model.py` or
  `<folder>/model/__init__.py` under the importing file's folder and the workspace
  roots, and caches each file's analysis by (path, size, mtime).  Cheap enough for the
  keystroke path once warm: a cache hit is one `stat`.
- Files open in an editor are read from the editor's text, not the disk: a language
  server installs `open_text` (path -> (version, text) or None), so an unsaved edit of
  `model.py` is what `train.py` sees.
- Returning None for a module it cannot or has not yet resolved is always allowed (the
  class is then unknown, and the rules that need it stay silent).

jedi is not used for this (it was a dependency once): its first `goto` on an import took
1.24 s here and about 37 MB, and on nine public training code bases every model class the
rules could not classify came from the project's own files, which this resolver finds by
path.  A module of an installed package is a file on the interpreter's `sys.path`: a
path lookup, like this one, would find it without jedi.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Protocol

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

MAX_FILE_BYTES = 2_000_000


class ImportResolver(Protocol):
    def analysis_of(self, module: str, importer_path: str | None) -> "Analysis | None":
        """The analysis of the file `module` names, seen from `importer_path`, or None."""


class WorkspaceResolver:
    """Resolves imports to `.py` files under the importer's folder and the given roots."""

    def __init__(self, roots: list[str] | None = None,
                 open_text: Callable[[str], "tuple[int | None, str] | None"] | None = None):
        self.roots = [os.path.abspath(r) for r in roots or []]
        self.open_text = open_text
        self._cache: dict[str, tuple[tuple, "Analysis"]] = {}

    def analysis_of(self, module: str, importer_path: str | None) -> "Analysis | None":
        path = self.find(module, importer_path)
        if path is None:
            return None
        opened = self.open_text(path) if self.open_text is not None else None
        if opened is not None:
            return self._open_analysis(path, *opened)
        try:
            status = os.stat(path)
        except OSError:
            return None
        stamp = (status.st_size, status.st_mtime_ns)
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        if status.st_size > MAX_FILE_BYTES:
            return None
        try:
            with open(path, encoding="utf-8") as handle:
                source = handle.read()
        except (OSError, UnicodeDecodeError):
            return None
        from torch_lsp.analysis import analyze

        analysis = analyze(source, path)
        self._cache[path] = (stamp, analysis)
        return analysis

    def _open_analysis(self, path: str, version: int | None, text: str) -> "Analysis | None":
        stamp = ("open", version, len(text))
        cached = self._cache.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        if len(text) > MAX_FILE_BYTES:
            return None
        from torch_lsp.analysis import analyze

        analysis = analyze(text, path)
        self._cache[path] = (stamp, analysis)
        return analysis

    def forget(self) -> None:
        """Drop the analyses kept (the server does when no document is open)."""
        self._cache = {}

    def find(self, module: str, importer_path: str | None) -> str | None:
        if module.startswith("."):
            return relative_module_file(module, importer_path)
        parts = module.split(".")
        folders = []
        if importer_path and importer_path not in ("<stdin>", "-"):
            folders.append(os.path.dirname(os.path.abspath(importer_path)))
        folders.extend(self.roots)
        for folder in folders:
            base = os.path.join(folder, *parts)
            for candidate in (base + ".py", os.path.join(base, "__init__.py")):
                if os.path.isfile(candidate) and (not importer_path or
                                                  os.path.abspath(candidate) != os.path.abspath(importer_path)):
                    return candidate
        return None


def relative_module_file(module: str, importer_path: str | None) -> str | None:
    """The file of a relative import (`.utils`, `..models.gpt`) seen from the importing file:
    one dot is the importer's package folder, each further dot the folder above."""
    if not importer_path or importer_path in ("<stdin>", "-"):
        return None
    level = len(module) - len(module.lstrip("."))
    folder = os.path.dirname(os.path.abspath(importer_path))
    for _ in range(level - 1):
        folder = os.path.dirname(folder)
    rest = [part for part in module[level:].split(".") if part]
    if not rest:
        return None  # `from . import name`: the name is a module, resolved with its own dots
    base = os.path.join(folder, *rest)
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate) and os.path.abspath(candidate) != os.path.abspath(importer_path):
            return candidate
    return None
