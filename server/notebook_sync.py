"""Jupyter notebooks in the language server (LSP 3.17 notebook document sync).

A client that opens a notebook sends `notebookDocument/didOpen|didChange|didSave|didClose`
with the notebook's cells, each cell a text document of its own (a `vscode-notebook-cell:`
URI in VS Code).  The notebook's code cells run as one program, so the server checks
them as one: `OpenNotebook` keeps the cells and their texts and hands the program
(`torch_lsp.notebooks`) to the document store under the notebook's URI and version,
where the check pipeline treats it like any open file.  What goes back to the client
is in each cell's own coordinates: diagnostics are pushed per cell URI, with the
cell's version, to every client, pull clients included (`publish_per_cell`; why in
`torch_lsp.lsp`), and requests that name a cell (hover, inlay hints, code actions)
are turned into the program's coordinates and back by a `CellPlace`.  A cell that
had diagnostics and is removed, turned into markdown, or closed with its notebook
gets an empty list, so nothing stale stays in the client's Problems panel.  Columns need no conversion: a cell's lines are lines of the program, with
the same characters.  Edits are applied to the program, split back into cells, and
sent as one edit per changed cell, so a fix that adds an import to the first cell
edits that cell too.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from attrs import evolve
from lsprotocol import types as lsp

from torch_lsp.documents import replace_range
from torch_lsp.notebooks import CellSpan, NotebookProgram, notebook_program
from torch_lsp.text import LineIndex

if TYPE_CHECKING:
    from torch_lsp.lsp import TorchLanguageServer

# Python code cells of Jupyter notebooks (VS Code's notebook type for .ipynb files).
NOTEBOOK_SYNC = lsp.NotebookDocumentSyncOptions(
    notebook_selector=[lsp.NotebookDocumentFilterWithCells(
        notebook="jupyter-notebook", cells=[lsp.NotebookCellLanguage(language="python")])],
    save=True,
)
PYTHON = "python"
END_OF_LINE = 2**31 - 1  # LSP: a character past the end of a line is the line's end


@dataclass
class NotebookCellText:
    uri: str
    version: int
    language: str
    text: str


@dataclass
class OpenNotebook:
    """One open notebook: its cells in order and what each holds."""

    uri: str
    version: int
    cell_uris: list[str]  # every cell, markdown included, in notebook order
    code_cells: set[str]  # the URIs of the cells that are code
    texts: dict[str, NotebookCellText]
    program: NotebookProgram = field(init=False)
    # What each cell was last sent: (its version, its diagnostics).
    published: dict[str, tuple[int | None, list]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rebuild()

    def rebuild(self) -> None:
        """The program of the Python code cells, in order."""
        self.program = notebook_program([
            (number, self.texts[uri].text) for number, uri in enumerate(self.cell_uris, start=1)
            if uri in self.code_cells and uri in self.texts and self.texts[uri].language == PYTHON
        ])

    def cell_uri(self, cell: CellSpan) -> str:
        return self.cell_uris[cell.number - 1]

    def span_of(self, cell_uri: str) -> CellSpan | None:
        if cell_uri not in self.cell_uris:
            return None
        return self.program.cell_numbered(self.cell_uris.index(cell_uri) + 1)


class NotebookDocuments:
    """The open notebooks, and which notebook each cell belongs to."""

    def __init__(self) -> None:
        self._notebooks: dict[str, OpenNotebook] = {}
        self._notebook_of_cell: dict[str, str] = {}

    def get(self, uri: str) -> OpenNotebook | None:
        return self._notebooks.get(uri)

    def owns(self, uri: str) -> bool:
        """Whether `uri` is an open notebook or one of its cells (whose diagnostics are pushed)."""
        return uri in self._notebooks or uri in self._notebook_of_cell

    def place_of(self, cell_uri: str) -> "CellPlace | None":
        """Where a cell lies in its notebook's program; None for a document that is not
        a code cell of an open notebook."""
        notebook = self._notebooks.get(self._notebook_of_cell.get(cell_uri, ""))
        span = notebook.span_of(cell_uri) if notebook is not None else None
        if span is None:
            return None
        return CellPlace(notebook, span, cell_uri)

    def open(self, params: lsp.DidOpenNotebookDocumentParams) -> OpenNotebook:
        document = params.notebook_document
        texts = {item.uri: NotebookCellText(item.uri, item.version, item.language_id, item.text)
                 for item in params.cell_text_documents}
        notebook = OpenNotebook(document.uri, document.version, [cell.document for cell in document.cells],
                                {cell.document for cell in document.cells if cell.kind == lsp.NotebookCellKind.Code},
                                texts)
        self._notebooks[document.uri] = notebook
        for uri in notebook.cell_uris:
            self._notebook_of_cell[uri] = document.uri
        return notebook

    def change(self, params: lsp.DidChangeNotebookDocumentParams, encoding: str) -> OpenNotebook | None:
        notebook = self._notebooks.get(params.notebook_document.uri)
        if notebook is None:
            return None
        notebook.version = params.notebook_document.version
        cells = params.change.cells
        if cells is not None:
            if cells.structure is not None:
                self._restructure(notebook, cells.structure)
            for cell in cells.data or []:
                (notebook.code_cells.add if cell.kind == lsp.NotebookCellKind.Code else notebook.code_cells.discard)(
                    cell.document)
            for content in cells.text_content or []:
                self._edit_cell(notebook, content, encoding)
        notebook.rebuild()
        return notebook

    def _restructure(self, notebook: OpenNotebook, structure: lsp.NotebookDocumentCellChangeStructure) -> None:
        array = structure.array
        removed = notebook.cell_uris[array.start:array.start + array.delete_count]
        added = list(array.cells or [])
        notebook.cell_uris[array.start:array.start + array.delete_count] = [cell.document for cell in added]
        for cell in added:
            self._notebook_of_cell[cell.document] = notebook.uri
            if cell.kind == lsp.NotebookCellKind.Code:
                notebook.code_cells.add(cell.document)
        for item in structure.did_open or []:
            notebook.texts[item.uri] = NotebookCellText(item.uri, item.version, item.language_id, item.text)
        for identifier in structure.did_close or []:
            notebook.texts.pop(identifier.uri, None)
        for uri in removed:
            if uri not in notebook.cell_uris:  # moved cells are removed and added again
                notebook.code_cells.discard(uri)
                self._notebook_of_cell.pop(uri, None)

    @staticmethod
    def _edit_cell(notebook: OpenNotebook, content: lsp.NotebookDocumentCellContentChanges, encoding: str) -> None:
        cell = notebook.texts.get(content.document.uri)
        if cell is None:
            return
        text = cell.text
        for change in content.changes:
            change_range = getattr(change, "range", None)
            if change_range is None:
                text = change.text
            else:
                text = replace_range(text, ((change_range.start.line, change_range.start.character),
                                            (change_range.end.line, change_range.end.character)), change.text, encoding)
        cell.text, cell.version = text, content.document.version

    def close(self, uri: str) -> OpenNotebook | None:
        notebook = self._notebooks.pop(uri, None)
        for cell_uri in notebook.cell_uris if notebook is not None else ():
            self._notebook_of_cell.pop(cell_uri, None)
        return notebook


# ------------------------------------------------------------------ the program <-> a cell
def shifted(range_: lsp.Range, lines: int) -> lsp.Range:
    return lsp.Range(start=lsp.Position(line=max(range_.start.line + lines, 0), character=range_.start.character),
                     end=lsp.Position(line=max(range_.end.line + lines, 0), character=range_.end.character))


def clamped_to(range_: lsp.Range, cell: CellSpan) -> lsp.Range:
    """A range of the program cut at its cell's last line (a range past the end of a line
    means its end, as LSP says)."""
    last = cell.first_line + cell.line_count - 2  # 0-based
    if range_.end.line <= last:
        return range_
    start = range_.start if range_.start.line <= last else lsp.Position(line=last, character=END_OF_LINE)
    return lsp.Range(start=start, end=lsp.Position(line=last, character=END_OF_LINE))


@dataclass(frozen=True)
class CellPlace:
    """A code cell of an open notebook, for turning a request on it into one on the program."""

    notebook: OpenNotebook
    cell: CellSpan
    cell_uri: str

    @property
    def notebook_uri(self) -> str:
        return self.notebook.uri

    @property
    def offset(self) -> int:
        """Program line (0-based) = cell line + offset."""
        return self.cell.first_line - 1

    def to_program(self, position: lsp.Position) -> lsp.Position:
        line = min(max(position.line, 0), self.cell.line_count - 1)
        return lsp.Position(line=line + self.offset, character=position.character)

    def range_to_program(self, range_: lsp.Range) -> lsp.Range:
        return lsp.Range(start=self.to_program(range_.start), end=self.to_program(range_.end))

    def range_to_cell(self, range_: lsp.Range) -> lsp.Range:
        return shifted(clamped_to(range_, self.cell), -self.offset)

    def holds(self, program_line: int) -> bool:
        """Whether the program's 0-based line is a line of this cell."""
        return self.offset <= program_line < self.offset + self.cell.line_count

    def diagnostic_to_program(self, diagnostic: lsp.Diagnostic) -> lsp.Diagnostic:
        return evolve(diagnostic, range=self.range_to_program(diagnostic.range))

    def hover_in_cell(self, hover: lsp.Hover | None) -> lsp.Hover | None:
        if hover is None:
            return None
        contents = hover.contents
        if isinstance(contents, lsp.MarkupContent):
            contents = lsp.MarkupContent(kind=contents.kind, value=self.notebook.program.in_cell_terms(contents.value))
        return lsp.Hover(contents=contents, range=self.range_to_cell(hover.range) if hover.range else None)

    def hints_in_cell(self, hints: list[lsp.InlayHint]) -> list[lsp.InlayHint]:
        program = self.notebook.program
        return [
            evolve(hint, position=lsp.Position(line=hint.position.line - self.offset, character=hint.position.character),
                    tooltip=program.in_cell_terms(hint.tooltip) if isinstance(hint.tooltip, str) else hint.tooltip)
            for hint in hints if self.holds(hint.position.line)
        ]

    def actions_in_cell(self, actions: list[lsp.CodeAction], encoding: str, versioned: bool) -> list[lsp.CodeAction]:
        moved = (self.action_in_cell(action, encoding, versioned) for action in actions)
        return [action for action in moved if action is not None]

    def action_in_cell(self, action: lsp.CodeAction, encoding: str, versioned: bool) -> lsp.CodeAction | None:
        """A code action on the program as one on the notebook's cells (None when its edit
        cannot be split back into cells)."""
        diagnostics = [evolve(d, range=self.range_to_cell(d.range)) for d in action.diagnostics or []] or None
        if action.edit is None:
            return evolve(action, diagnostics=diagnostics)
        edit = edit_in_cells(self.notebook, action.edit, encoding, versioned)
        return evolve(action, diagnostics=diagnostics, edit=edit) if edit is not None else None


# ------------------------------------------------------------------ diagnostics and edits per cell
def diagnostics_by_cell(notebook: OpenNotebook, diagnostics: list[lsp.Diagnostic]) -> dict[str, list[lsp.Diagnostic]]:
    """The program's diagnostics, each in its cell's coordinates, for every code cell (an
    empty list for a cell without any)."""
    program = notebook.program
    by_cell: dict[str, list[lsp.Diagnostic]] = {notebook.cell_uri(cell): [] for cell in program.cells}
    for diagnostic in diagnostics if program.cells else ():
        # One on a separator line (a syntax error after an unclosed bracket) goes to the cell before.
        cell, _ = program.cell_line(diagnostic.range.start.line + 1)
        place = CellPlace(notebook, cell, notebook.cell_uri(cell))
        related = [related_in_cell(notebook, info) for info in diagnostic.related_information or []] or None
        by_cell[place.cell_uri].append(evolve(
            diagnostic, range=place.range_to_cell(diagnostic.range),
            message=program.in_cell_terms(diagnostic.message), related_information=related))
    return by_cell


def related_in_cell(notebook: OpenNotebook, info: lsp.DiagnosticRelatedInformation):
    """A related place in the notebook's program, as a place in its cell."""
    if info.location.uri != notebook.uri:
        return info
    program = notebook.program
    cell, _ = program.cell_line(info.location.range.start.line + 1)
    place = CellPlace(notebook, cell, notebook.cell_uri(cell))
    return lsp.DiagnosticRelatedInformation(
        location=lsp.Location(uri=place.cell_uri, range=place.range_to_cell(info.location.range)),
        message=program.in_cell_terms(info.message))


def edit_in_cells(notebook: OpenNotebook, edit: lsp.WorkspaceEdit, encoding: str,
                  versioned: bool) -> lsp.WorkspaceEdit | None:
    """A workspace edit of the notebook's program as one minimal edit per changed cell."""
    edits = [e for change in edit.document_changes or [] if isinstance(change, lsp.TextDocumentEdit)
             and change.text_document.uri == notebook.uri for e in change.edits]
    edits += (edit.changes or {}).get(notebook.uri, [])
    program = notebook.program
    fixed = _applied(program.source, edits, encoding)
    texts = program.cells_of(fixed)
    if texts is None:
        return None
    changes: dict[str, list[lsp.TextEdit]] = {}
    for cell, text in zip(program.cells, texts):
        if text != cell.source:
            changes[notebook.cell_uri(cell)] = [_minimal_edit(cell.source, text, encoding)]
    if not versioned:
        return lsp.WorkspaceEdit(changes=changes)
    return lsp.WorkspaceEdit(document_changes=[
        lsp.TextDocumentEdit(text_document=lsp.OptionalVersionedTextDocumentIdentifier(
            uri=uri, version=notebook.texts[uri].version), edits=cell_edits)
        for uri, cell_edits in changes.items()
    ])


def _applied(text: str, edits: list[lsp.TextEdit], encoding: str) -> str:
    index = LineIndex(text)
    spans = sorted(((index.offset_from_client(e.range.start.line, e.range.start.character, encoding),
                     index.offset_from_client(e.range.end.line, e.range.end.character, encoding), e.new_text)
                    for e in edits), reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def _minimal_edit(old: str, new: str, encoding: str) -> lsp.TextEdit:
    """One edit from `old` to `new`: the span between their common start and common end."""
    start = 0
    while start < min(len(old), len(new)) and old[start] == new[start]:
        start += 1
    end = 0
    while end < min(len(old), len(new)) - start and old[len(old) - 1 - end] == new[len(new) - 1 - end]:
        end += 1
    index = LineIndex(old)
    return lsp.TextEdit(range=lsp.Range(start=_client_position(index, start, encoding),
                                        end=_client_position(index, len(old) - end, encoding)),
                        new_text=new[start:len(new) - end])


def _client_position(index: LineIndex, offset: int, encoding: str) -> lsp.Position:
    line, column = index.position(offset)
    return lsp.Position(line=line - 1, character=index.client_column_from_char(line - 1, column, encoding))


# ------------------------------------------------------------------ the notebook notifications
def add_notebook_features(server: "TorchLanguageServer") -> None:
    """Keep open notebooks in sync and checked as programs under their own URI."""

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def did_open_notebook(ls: "TorchLanguageServer", params: lsp.DidOpenNotebookDocumentParams) -> None:
        notebook = ls.notebooks.open(params)
        ls.documents.open(notebook.uri, notebook.version, notebook.program.source)
        ls.scheduler.check_soon(notebook.uri, 0)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change_notebook(ls: "TorchLanguageServer", params: lsp.DidChangeNotebookDocumentParams) -> None:
        from torch_lsp.lsp import CHANGE_DEBOUNCE_S

        notebook = ls.notebooks.change(params, ls.encoding)
        if notebook is None:
            return
        ls.documents.change(notebook.uri, notebook.version, [(None, notebook.program.source)], ls.encoding)
        ls.scheduler.check_soon(notebook.uri, CHANGE_DEBOUNCE_S)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def did_save_notebook(ls: "TorchLanguageServer", params: lsp.DidSaveNotebookDocumentParams) -> None:
        ls.scheduler.check_soon(params.notebook_document.uri, 0)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def did_close_notebook(ls: "TorchLanguageServer", params: lsp.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        notebook = ls.notebooks.close(uri)
        ls.documents.close(uri)
        ls.scheduler.closed(uri)
        for cell_uri in sorted(notebook.published) if notebook is not None else ():
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))


def publish_per_cell(ls: "TorchLanguageServer", notebook: OpenNotebook, diagnostics: list[lsp.Diagnostic]) -> None:
    """Push a notebook program's diagnostics to its cells: to each cell whose text or
    diagnostics changed since the last push, and an empty list to a cell that had some
    and is no longer code."""
    by_cell = diagnostics_by_cell(notebook, diagnostics)
    for uri in sorted(set(notebook.published) - set(by_cell)):
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    published = {}
    for uri, cell_diagnostics in by_cell.items():
        version = notebook.texts[uri].version if uri in notebook.texts else None
        published[uri] = (version, cell_diagnostics)
        if notebook.published.get(uri) != published[uri]:
            ls.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=cell_diagnostics, version=version))
    notebook.published = published
