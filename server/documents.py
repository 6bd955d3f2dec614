"""What the server keeps per open document: its text by version, the checked
versions it still serves, and the settings that apply to it.

Text is kept whole and split into lines only the LSP way (`torch_lsp.text`), never
with `str.splitlines()`.  Nothing here speaks LSP types: positions arrive as
(0-based line, client column) pairs with the negotiated column unit.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import unquote, urlparse

from torch_lsp.settings import Settings, load_project_settings, merge_editor_settings
from torch_lsp.text import LineIndex

# --------------------------------------------------------------- documents
@dataclass(frozen=True)
class OpenDocument:
    uri: str
    version: int | None
    text: str

    @property
    def path(self) -> str | None:
        return path_from_uri(self.uri)


def path_from_uri(uri: str) -> str | None:
    """Local file path of a `file:` URI; None for untitled buffers and the like."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    path = unquote(parsed.path)
    if os.name == "nt" and re.match(r"^/[A-Za-z]:", path):
        path = path[1:]
    return path


class DocumentStore:
    """The open documents; a change (ranged, or the whole text) makes a new `OpenDocument`."""

    def __init__(self) -> None:
        self._documents: dict[str, OpenDocument] = {}

    def open(self, uri: str, version: int | None, text: str) -> OpenDocument:
        document = OpenDocument(uri, version, text)
        self._documents[uri] = document
        return document

    def change(self, uri: str, version: int | None, changes: list[tuple[Any, str]], encoding: str) -> OpenDocument | None:
        """Apply content changes in order.  Each is (range, text): range None replaces
        the whole text, else ((start line, start column), (end line, end column)) in
        the client's unit."""
        document = self._documents.get(uri)
        if document is None:
            return None
        text = document.text
        for change_range, new_text in changes:
            text = new_text if change_range is None else replace_range(text, change_range, new_text, encoding)
        document = OpenDocument(uri, version, text)
        self._documents[uri] = document
        return document

    def close(self, uri: str) -> None:
        self._documents.pop(uri, None)

    def get(self, uri: str) -> OpenDocument | None:
        return self._documents.get(uri)

    def open_text_of(self, path: str) -> tuple[int | None, str] | None:
        """(version, text) of the open document at this file path, or None (read on the
        analysis thread: one dict scan, no mutation)."""
        target = os.path.abspath(path)
        for document in list(self._documents.values()):
            if document.path is not None and os.path.abspath(document.path) == target:
                return document.version, document.text
        return None

    def all(self) -> list[OpenDocument]:
        return list(self._documents.values())


def replace_range(text: str, change_range: tuple[tuple[int, int], tuple[int, int]], new_text: str, encoding: str) -> str:
    """`text` with a client range replaced (positions clamped into the text, lines split
    the LSP way: only at \\n, \\r\\n and \\r)."""
    (start_line, start_col), (end_line, end_col) = change_range
    index = LineIndex(text)
    start = index.offset_from_client(start_line, start_col, encoding)
    end = max(start, index.offset_from_client(end_line, end_col, encoding))
    return text[:start] + new_text + text[end:]


# --------------------------------------------------------------- analyses
@dataclass
class CheckedVersion:
    """The outcome of checking one version of a document under one settings generation.

    `result` is the `CheckResult` (None when the document was too large to analyse, or
    when the version was `light`ened: kept for its diagnostics only, the analysis freed);
    `diagnostics` are ready to send; `settings_problems` are (origin, messages) pairs;
    `imported_modules` are the absolute imports of the version (`torch_lsp.dependents`),
    kept when it is lightened: an edit of a file it imports checks it again."""

    version: int | None
    generation: int
    result: Any
    diagnostics: list
    settings_problems: list[tuple[str, tuple[str, ...]]] = field(default_factory=list)
    light: bool = False
    imported_modules: frozenset[str] = frozenset()
    # Errors this version's calls prove in other files (`caller_proofs.CallerProof`): shown
    # in those files too while they are open.
    proofs: tuple = ()

    @property
    def lines_analysed(self) -> int:
        """How large the analysis this version holds is, in lines (0 when it holds none)."""
        return len(self.result.analysis.lines.lines) if self.result is not None else 0


class CheckCache:
    """The latest few checked versions of each document.

    An analysis is about 5 KB per line of source (tree, facts, shape pass), so only the
    newest version of the most recently active documents keeps one, up to
    `ANALYSED_LINES_KEPT` lines in all (the most recent document always): hover, inlay
    hints and code actions answer from it.  Every other version is kept `light`, its
    diagnostics only: a pull is answered from it, and a hover there analyses it again."""

    VERSIONS_KEPT = 3
    ANALYSED_LINES_KEPT = 6000

    def __init__(self) -> None:
        self._by_uri: dict[str, list[CheckedVersion]] = {}
        self._active: dict[str, None] = {}  # uris, the least recently active first

    def get(self, uri: str, version: int | None, generation: int) -> CheckedVersion | None:
        for checked in self._by_uri.get(uri, []):
            if checked.version == version and checked.generation == generation:
                return checked
        return None

    def latest(self, uri: str) -> CheckedVersion | None:
        kept = self._by_uri.get(uri)
        return kept[-1] if kept else None

    def latest_of_each(self) -> list[tuple[str, CheckedVersion]]:
        """(uri, newest checked version) of every document with one."""
        return [(uri, kept[-1]) for uri, kept in list(self._by_uri.items()) if kept]

    def put(self, uri: str, checked: CheckedVersion) -> list[CheckedVersion]:
        """Keep `checked`; the versions it pushes out or lightens are returned in full
        (see `release_versions`)."""
        before = self._by_uri.get(uri, [])
        same = (checked.version, checked.generation)
        kept = [c for c in before if (c.version, c.generation) != same]
        # The same version again (analysed again after it was lightened, or probed): the one it
        # replaces is released unless both share the analysis.
        released = [c for c in before if (c.version, c.generation) == same and c.result is not None
                    and (checked.result is None or c.result.analysis is not checked.result.analysis)]
        released += [c for c in kept[:-(self.VERSIONS_KEPT - 1)] if c.result is not None]
        kept = kept[-(self.VERSIONS_KEPT - 1):]
        for index, older in enumerate(kept):
            if older.result is not None:
                released.append(older)
                kept[index] = lightened(older)
        self._by_uri[uri] = kept + [checked]
        return released + self.touch(uri)

    def touch(self, uri: str) -> list[CheckedVersion]:
        """`uri` is the most recently active document now; the analyses of the least recently
        active ones beyond `ANALYSED_LINES_KEPT` are lightened, and returned in full."""
        self._active.pop(uri, None)
        self._active[uri] = None
        released, lines = [], 0
        for active in reversed(self._active):
            kept = self._by_uri.get(active, [])
            if not kept or kept[-1].result is None:
                continue
            lines += kept[-1].lines_analysed
            if active != uri and lines > self.ANALYSED_LINES_KEPT:
                released.append(kept[-1])
                kept[-1] = lightened(kept[-1])
        return released

    def forget(self, uri: str) -> list[CheckedVersion]:
        """Drop every version of a closed document; those holding an analysis are returned
        (see `release_versions`)."""
        self._active.pop(uri, None)
        return [c for c in self._by_uri.pop(uri, []) if c.result is not None]

    def analyses_kept(self) -> int:
        return sum(1 for kept in self._by_uri.values() for c in kept if c.result is not None)


def lightened(checked: CheckedVersion) -> CheckedVersion:
    """A copy of `checked` without its analysis: diagnostics only.  A copy, so that a
    request still reading the full version is not pulled from under."""
    return replace(checked, result=None, light=True)


def release_versions(versions: list[CheckedVersion]) -> None:
    """Free the memory of versions the server no longer serves now, not at the next full
    garbage collection (their shape pass holds reference cycles).  Run it on the analysis
    thread, after whatever was queued there, so that no queued work still reads them."""
    from torch_lsp.shapes import release_shapes

    for checked in versions:
        if checked.result is not None:
            release_shapes(checked.result.analysis)


# --------------------------------------------------------------- settings
EDITOR_ORIGIN = "editor settings"


class DocumentSettings:
    """Settings for each document: its nearest `pyproject.toml`, overridden by the
    editor's settings.  Every change of either source starts a new generation, so
    results computed under old settings are recognised and recomputed."""

    def __init__(self) -> None:
        self.editor: dict = {}
        self.generation = 0
        # Workspace folders: the editor's `per-file-ignores` globs are relative to them.
        self.workspace_folders: list[str] = []
        self._projects: dict[tuple[int, str | None], tuple[Settings, list, str | None]] = {}

    def set_editor(self, editor: dict) -> None:
        self.editor = editor
        self.invalidate()

    def invalidate(self) -> None:
        self.generation += 1
        self._projects = {key: value for key, value in self._projects.items() if key[0] == self.generation}

    def editor_problems(self) -> list[tuple[str, tuple[str, ...]]]:
        root = self.workspace_folders[0] if self.workspace_folders else None
        _, errors = merge_editor_settings(Settings(), self.editor, root=root)
        return [(EDITOR_ORIGIN, tuple(errors))] if errors else []

    def _workspace_folder_of(self, path: str | None) -> str | None:
        if path is None:
            return self.workspace_folders[0] if self.workspace_folders else None
        containing = [f for f in self.workspace_folders if path.startswith(f.rstrip(os.sep) + os.sep)]
        return max(containing, key=len) if containing else os.path.dirname(path)

    def settings_for(self, path: str | None, generation: int) -> tuple[Settings, list[tuple[str, tuple[str, ...]]]]:
        """Settings for the file at `path` and the problems met building them.

        Runs on the analysis thread; `generation` is the one the caller started under,
        so a project read after a change is never stored for the old generation."""
        key = (generation, os.path.dirname(path) if path else None)
        project = self._projects.get(key)
        if project is None:
            project = load_project_settings(path) if path else (Settings(), [], None)
            self._projects[key] = project
        base, project_errors, pyproject = project
        settings, editor_errors = merge_editor_settings(base, self.editor, root=self._workspace_folder_of(path))
        problems = []
        if project_errors:
            problems.append((str(pyproject or "pyproject.toml"), tuple(project_errors)))
        if editor_errors:
            problems.append((EDITOR_ORIGIN, tuple(editor_errors)))
        return settings, problems
