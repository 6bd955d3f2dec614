"""A Jupyter notebook as an LSP 3.17 client sends it: `notebookDocument/*` notifications
with one text document per cell (`vscode-notebook-cell:` URIs, as VS Code names them).

`ClientNotebook` keeps the cells the way the client does and reads back what the
server says about each cell: its diagnostics, as a user sees them (what was pushed
for the cell URI, in both profiles, plus what a pull of the cell adds, which must be
nothing: VS Code lists pushed and pulled diagnostics side by side), and workspace
edits applied to cell texts with the test's own LSP line splitting
(`lsp_session.apply_edits`).
"""
from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass

from lsprotocol import types as lsp

from tests.lsp.lsp_session import WAIT_S, Session, apply_edits

CODE, MARKDOWN = lsp.NotebookCellKind.Code, lsp.NotebookCellKind.Markup
_CELL_IDS = itertools.count()


@dataclass
class ClientCell:
    uri: str
    kind: lsp.NotebookCellKind
    text: str
    version: int = 1

    @property
    def language(self) -> str:
        return "python" if self.kind == CODE else "markdown"

    def item(self) -> lsp.TextDocumentItem:
        return lsp.TextDocumentItem(uri=self.uri, language_id=self.language, version=self.version, text=self.text)


class ClientNotebook:
    def __init__(self, editor: Session, name: str, cells: list[tuple[lsp.NotebookCellKind, str]]):
        self.editor = editor
        self.path = editor.root / name
        self.uri = self.path.as_uri()
        self.version = 1
        self.cells = [self.new_cell(kind, text) for kind, text in cells]
        editor.client.notebook_document_did_open(lsp.DidOpenNotebookDocumentParams(
            notebook_document=lsp.NotebookDocument(uri=self.uri, notebook_type="jupyter-notebook",
                                                   version=self.version, cells=[self._cell(c) for c in self.cells]),
            cell_text_documents=[cell.item() for cell in self.cells if cell.kind == CODE] +
                                [cell.item() for cell in self.cells if cell.kind != CODE],
        ))

    def new_cell(self, kind: lsp.NotebookCellKind, text: str) -> ClientCell:
        return ClientCell(f"vscode-notebook-cell:{self.path}#W{next(_CELL_IDS)}sZmlsZQ%3D%3D", kind, text)

    @staticmethod
    def _cell(cell: ClientCell) -> lsp.NotebookCell:
        return lsp.NotebookCell(kind=cell.kind, document=cell.uri)

    # -- what the client sends
    def edit_cell(self, index: int, text: str) -> None:
        """Replace a cell's text (whole-document sync, as the server asks)."""
        cell = self.cells[index]
        cell.text, cell.version, self.version = text, cell.version + 1, self.version + 1
        self._changed(lsp.NotebookDocumentCellChanges(text_content=[lsp.NotebookDocumentCellContentChanges(
            document=lsp.VersionedTextDocumentIdentifier(uri=cell.uri, version=cell.version),
            changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)])]))

    def edit_cell_range(self, index: int, range_: lsp.Range, new_text: str) -> None:
        """A ranged change of one cell, as a client that ignores whole-document sync sends it."""
        cell = self.cells[index]
        cell.text = apply_edits(cell.text, [lsp.TextEdit(range=range_, new_text=new_text)], self.editor.encoding)
        cell.version, self.version = cell.version + 1, self.version + 1
        self._changed(lsp.NotebookDocumentCellChanges(text_content=[lsp.NotebookDocumentCellContentChanges(
            document=lsp.VersionedTextDocumentIdentifier(uri=cell.uri, version=cell.version),
            changes=[lsp.TextDocumentContentChangePartial(range=range_, text=new_text)])]))

    def splice(self, start: int, delete: int, added: list[ClientCell]) -> None:
        """Cells removed and added at `start` (a move is both, the moved cell's text kept open)."""
        removed = self.cells[start:start + delete]
        self.cells[start:start + delete] = added
        self.version += 1
        kept = {cell.uri for cell in self.cells}
        self._changed(lsp.NotebookDocumentCellChanges(structure=lsp.NotebookDocumentCellChangeStructure(
            array=lsp.NotebookCellArrayChange(start=start, delete_count=delete,
                                              cells=[self._cell(cell) for cell in added]),
            did_open=[cell.item() for cell in added if cell.uri not in {r.uri for r in removed}],
            did_close=[lsp.TextDocumentIdentifier(uri=cell.uri) for cell in removed if cell.uri not in kept],
        )))

    def change_kind(self, index: int, kind: lsp.NotebookCellKind) -> None:
        """A cell turned into markdown (or back into code), its text kept."""
        cell = self.cells[index]
        cell.kind, self.version = kind, self.version + 1
        self._changed(lsp.NotebookDocumentCellChanges(data=[self._cell(cell)]))

    def _changed(self, cells: lsp.NotebookDocumentCellChanges) -> None:
        self.editor.client.notebook_document_did_change(lsp.DidChangeNotebookDocumentParams(
            notebook_document=lsp.VersionedNotebookDocumentIdentifier(uri=self.uri, version=self.version),
            change=lsp.NotebookDocumentChangeEvent(cells=cells)))

    def save(self) -> None:
        self.editor.client.notebook_document_did_save(lsp.DidSaveNotebookDocumentParams(
            notebook_document=lsp.NotebookDocumentIdentifier(uri=self.uri)))

    def close(self) -> None:
        self.editor.client.notebook_document_did_close(lsp.DidCloseNotebookDocumentParams(
            notebook_document=lsp.NotebookDocumentIdentifier(uri=self.uri),
            cell_text_documents=[lsp.TextDocumentIdentifier(uri=cell.uri) for cell in self.cells]))

    # -- what the server says
    async def diagnostics(self, cell: ClientCell, until=lambda diagnostics: True) -> list[lsp.Diagnostic]:
        """The cell's diagnostics once `until` holds for them: the last push for the cell's
        current version (every client gets a notebook's diagnostics pushed).  A pull client
        would also list what a pull of the cell answers: it must be empty, or the user would
        see each finding twice."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_S
        while True:
            found = self.pushed(cell)
            if found is not None and until(found):
                if self.editor.pulls:
                    assert await self.pulled(cell) == [], f"a pull of {cell.uri} repeats what was pushed"
                return found
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for diagnostics of {cell.uri}; last: {found}")
            await asyncio.sleep(0.05)

    def pushed(self, cell: ClientCell) -> list[lsp.Diagnostic] | None:
        """What the server last pushed for the cell's current version (None: nothing yet)."""
        published = [p for p in self.editor.client.published[cell.uri] if p.version == cell.version]
        return list(published[-1].diagnostics) if published else None

    async def pulled(self, cell: ClientCell) -> list[lsp.Diagnostic]:
        """What a pull of the cell's diagnostics answers (a full report)."""
        report = await self.editor.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri=cell.uri)))
        assert report.kind == "full", report
        return list(report.items)

    def shown(self, uri: str) -> list[lsp.Diagnostic]:
        """What the client shows for a URI after the last push to it, whatever its version
        (a removed or closed cell's, or the notebook file's)."""
        published = self.editor.client.published[uri]
        return list(published[-1].diagnostics) if published else []

    def applied(self, edit: lsp.WorkspaceEdit) -> dict[str, str]:
        """The text of each cell the edit changes, after the edit (versions checked)."""
        by_uri = {cell.uri: cell for cell in self.cells}
        texts = {}
        if edit.document_changes:
            for change in edit.document_changes:
                cell = by_uri[change.text_document.uri]
                assert change.text_document.version == cell.version
                texts[cell.uri] = apply_edits(cell.text, change.edits, self.editor.encoding)
        for uri, edits in (edit.changes or {}).items():
            texts[uri] = apply_edits(by_uri[uri].text, edits, self.editor.encoding)
        return texts
