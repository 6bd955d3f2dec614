"""The protocol boundary: torch-lsp's own values in, lsprotocol types out (and back).

Findings, hover answers, inlay hints and code actions become LSP objects here and
nowhere else; a client's positions and code-action data become ours here too.
Columns are converted by the document version's `torch_lsp.text.LineIndex` in the
negotiated unit (`encoding`); `ast` positions are 1-based lines with UTF-8 byte
columns, code-action edits character offsets into the version's text.
"""
from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from torch_lsp.checker import SYNTAX_ERROR_CODE
from torch_lsp.codeactions import FIX_ALL, FIX_ALL_TITLE, Action, FixOffer, TextEdit
from torch_lsp.documents import OpenDocument, path_from_uri
from torch_lsp.reporting import rule_url
from torch_lsp.shapes.probe.lenses import PROBE_COMMAND
from torch_lsp.text import LineIndex, well_formed

SETTINGS_SECTION = "torch-lsp"
DIAGNOSTIC_SOURCE = "torch-lsp"
MAX_DOCUMENT_CHARS = 5_000_000
MAX_DOCUMENT_LINES = 100_000
TOO_LARGE_CODE = "file-too-large"
# A notification a person reads: a few sentences, however many problems there are.
MAX_MESSAGE_CHARS = 1_500

SEVERITIES = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}


# ------------------------------------------------------------------ positions
def ast_range(line: int, col: int, end_line: int, end_col: int, lines: LineIndex, encoding: str) -> lsp.Range:
    """An LSP range for an ast range (1-based lines, UTF-8 byte columns)."""
    return lsp.Range(
        start=lsp.Position(line=line - 1, character=lines.client_column(line, col, encoding)),
        end=lsp.Position(line=end_line - 1, character=lines.client_column(end_line, end_col, encoding)),
    )


def ast_position(position: lsp.Position, lines: LineIndex, encoding: str) -> tuple[int, int]:
    """The ast position (1-based line, UTF-8 byte column) of a client position on a line of the text."""
    return position.line + 1, lines.byte_from_client(position.line, position.character, encoding)


def diagnostic_span(diagnostic: lsp.Diagnostic, lines: LineIndex, encoding: str) -> tuple[int, int, int, int]:
    """The ast range (1-based lines, UTF-8 byte columns) of a client's diagnostic."""
    start, end = diagnostic.range.start, diagnostic.range.end
    return (
        lines.clamp_line(start.line) + 1, lines.byte_from_client(start.line, start.character, encoding),
        lines.clamp_line(end.line) + 1, lines.byte_from_client(end.line, end.character, encoding),
    )


def content_changes(params: lsp.DidChangeTextDocumentParams) -> list[tuple]:
    """The changes as `DocumentStore.change` takes them: (None, text) for the whole text, else
    (((start line, start column), (end line, end column)), text) in the client's unit."""
    changes = []
    for change in params.content_changes:
        change_range = getattr(change, "range", None)
        if change_range is not None:
            change_range = (
                (change_range.start.line, change_range.start.character),
                (change_range.end.line, change_range.end.character),
            )
        changes.append((change_range, well_formed(change.text)))
    return changes


def opened_text(item: lsp.TextDocumentItem) -> str:
    """The text of an opened document, as the server keeps it (`well_formed`)."""
    return well_formed(item.text)


# ------------------------------------------------------------------ diagnostics
def is_too_large(text: str) -> bool:
    return len(text) > MAX_DOCUMENT_CHARS or text.count("\n") > MAX_DOCUMENT_LINES


def too_large_diagnostic(text: str) -> lsp.Diagnostic:
    lines = text.count("\n") + 1
    megabytes = len(text.encode("utf-8", errors="replace")) / 1_000_000
    return lsp.Diagnostic(
        range=lsp.Range(start=lsp.Position(line=0, character=0), end=lsp.Position(line=0, character=0)),
        message=(
            f"This file is too large for torch-lsp to analyse while typing ({lines:,} lines, "
            f"{megabytes:.1f} MB; the limits are {MAX_DOCUMENT_LINES:,} lines and "
            f"{MAX_DOCUMENT_CHARS // 1_000_000} MB). Check it with `torch-lsp check` instead."
        ),
        severity=lsp.DiagnosticSeverity.Information,
        code=TOO_LARGE_CODE,
        source=DIAGNOSTIC_SOURCE,
    )


def to_diagnostic(finding, lines: LineIndex, encoding: str, uri: str | None = None) -> lsp.Diagnostic:
    """An LSP diagnostic for a finding, its columns in the client's unit; with the document's
    `uri`, what the finding depends on becomes its relatedInformation."""
    is_rule = finding.code != SYNTAX_ERROR_CODE
    related = [to_related(r, lines, encoding, uri) for r in getattr(finding, "related", ())] if uri else []
    return lsp.Diagnostic(
        range=ast_range(finding.line, finding.col, finding.end_line, finding.end_col, lines, encoding),
        message=finding.message,
        severity=SEVERITIES.get(finding.severity, lsp.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=lsp.CodeDescription(href=rule_url(finding.code)) if is_rule else None,
        source=DIAGNOSTIC_SOURCE,
        data={
            "fix": {"title": finding.fix.title, "safety": finding.fix.safety} if finding.fix else None,
            "detail": finding.data,
        },
        related_information=related or None,
    )


def to_related(related, lines: LineIndex, encoding: str, uri: str) -> lsp.DiagnosticRelatedInformation:
    """A place in this document or in another file, columns converted (UTF-8 bytes in another
    file whose text is not at hand)."""
    if related.path is None:
        span = ast_range(related.line, related.col, related.end_line, related.end_col, lines, encoding)
        return lsp.DiagnosticRelatedInformation(lsp.Location(uri, span), related.message)
    if related.lines is not None:
        span = ast_range(related.line, related.col, related.end_line, related.end_col, related.lines, encoding)
        return lsp.DiagnosticRelatedInformation(lsp.Location(Path(related.path).resolve().as_uri(), span),
                                                related.message)
    span = lsp.Range(lsp.Position(related.line - 1, related.col), lsp.Position(related.end_line - 1, related.end_col))
    return lsp.DiagnosticRelatedInformation(lsp.Location(Path(related.path).resolve().as_uri(), span), related.message)


# ------------------------------------------------------------------ shapes
def to_hover(answer, lines: LineIndex, encoding: str, formats: list[str]) -> lsp.Hover:
    """An LSP hover for a shape report's hover answer."""
    return lsp.Hover(
        contents=hover_contents(answer.markdown, formats),
        range=ast_range(answer.line, answer.col, answer.end_line, answer.end_col, lines, encoding),
    )


def hover_contents(markdown: str, formats: list[str]) -> lsp.MarkupContent:
    """Markdown, or plain text (code fences dropped) for a client that only takes plain text."""
    if not formats or lsp.MarkupKind.Markdown.value in formats:
        return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown)
    plain = "\n".join(line for line in markdown.splitlines() if not line.startswith("```"))
    return lsp.MarkupContent(kind=lsp.MarkupKind.PlainText, value=plain.replace("`", ""))


def to_inlay_hint(hint, lines: LineIndex, encoding: str) -> lsp.InlayHint:
    """An LSP inlay hint for a shape report's hint (1-based line, UTF-8 byte column)."""
    return lsp.InlayHint(
        position=lsp.Position(line=hint.line - 1, character=lines.client_column(hint.line, hint.col, encoding)),
        label=hint.label, kind=lsp.InlayHintKind.Type,
        tooltip=hint.tooltip or None,
    )


def to_code_lens(lens, uri: str, lines: LineIndex, encoding: str) -> lsp.CodeLens:
    """An LSP code lens over a module class that runs the probe command for it."""
    position = lsp.Position(line=lens.line - 1, character=lines.client_column(lens.line, lens.col, encoding))
    return lsp.CodeLens(range=lsp.Range(start=position, end=position),
                        command=lsp.Command(title=lens.title, command=PROBE_COMMAND,
                                            arguments=[uri, lens.class_name, None, lens.current]))


# ------------------------------------------------------------------ code actions
def to_code_action(action: Action, document: OpenDocument, lines: LineIndex, encoding: str,
                   diagnostic: lsp.Diagnostic | None, versioned: bool) -> lsp.CodeAction:
    """An LSP code action with its edit, for a versioned-edit client as a document change."""
    edits = [to_text_edit(edit, lines, encoding) for edit in action.edits]
    if versioned:
        identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version)
        edit = lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=identifier, edits=edits)])
    else:
        edit = lsp.WorkspaceEdit(changes={document.uri: edits})
    return lsp.CodeAction(
        title=action.title, kind=action.kind, diagnostics=[diagnostic] if diagnostic is not None else None,
        edit=edit, is_preferred=action.preferred or None,
    )


def to_text_edit(edit: TextEdit, lines: LineIndex, encoding: str) -> lsp.TextEdit:
    """An LSP text edit for an edit of `lines.source` (character offsets)."""
    return lsp.TextEdit(
        range=lsp.Range(start=offset_position(edit.start, lines, encoding),
                        end=offset_position(edit.end, lines, encoding)),
        new_text=edit.new_text,
    )


def offset_position(offset: int, lines: LineIndex, encoding: str) -> lsp.Position:
    """The client position of a character offset into `lines.source`."""
    line, column = lines.position(offset)
    return lsp.Position(line=line - 1, character=lines.client_column_from_char(line - 1, column, encoding))


def unresolved_fix_action(offer: FixOffer, span: tuple, document: OpenDocument,
                          diagnostic: lsp.Diagnostic) -> lsp.CodeAction:
    """A quick fix whose edit the client asks for later (`codeAction/resolve`): its data
    names the version and the finding (`fix_request_of` reads them back)."""
    return lsp.CodeAction(
        title=offer.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diagnostic],
        is_preferred=offer.preferred or None,
        data={"uri": document.uri, "version": document.version, "code": offer.code,
              "safety": offer.safety, "span": list(span)},
    )


def fix_request_of(action: lsp.CodeAction, data: dict) -> tuple[str, tuple, str]:
    """(code, span, title) of the fix an unresolved quick fix (`unresolved_fix_action`) stands for."""
    return data.get("code", ""), tuple(data.get("span", (0, 0, 0, 0))), action.title


def unresolved_fix_all_action(document: OpenDocument) -> lsp.CodeAction:
    """`source.fixAll.torch-lsp` with its edit left to `codeAction/resolve`."""
    return lsp.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL, data={"uri": document.uri, "version": document.version})


def action_data(action: lsp.CodeAction) -> dict:
    """The data an unresolved action carries ({} when a client dropped or mangled it)."""
    return action.data if isinstance(action.data, dict) else {}


def wants_kind(only: list[str] | None, kind: str) -> bool:
    """Whether a `context.only` filter admits actions of `kind` (kinds are dot-hierarchies)."""
    if not only:
        return True
    return any(wanted in ("", kind) or kind.startswith(f"{wanted}.") for wanted in only)


# ------------------------------------------------------------------ messages
def settings_message(sentences: tuple[str, ...] | list[str]) -> lsp.ShowMessageParams:
    """One warning with the settings problems found: as many whole sentences as fit in
    `MAX_MESSAGE_CHARS`, then how many more there are."""
    shown: list[str] = []
    length = 0
    for sentence in sentences:
        if shown and length + len(sentence) > MAX_MESSAGE_CHARS:
            break
        shown.append(sentence[:MAX_MESSAGE_CHARS])
        length += len(sentence) + 1
    rest = len(sentences) - len(shown)
    text = " ".join(shown) + (f" … and {rest:,} more problems of the same settings." if rest else "")
    return lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"torch-lsp: {text}")


# ------------------------------------------------------------------ initialisation
def editor_section(options) -> dict:
    """Settings from initializationOptions or didChangeConfiguration: either the
    settings themselves or wrapped as {"torch-lsp": {...}}."""
    if not isinstance(options, dict):
        return {}
    inner = options.get(SETTINGS_SECTION)
    return inner if isinstance(inner, dict) else options


def workspace_folders(params: lsp.InitializeParams) -> list[str]:
    """Local paths of the workspace folders (or the root) the client opened."""
    uris = [folder.uri for folder in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    paths = [path_from_uri(uri) for uri in uris]
    if not paths and params.root_path:
        paths = [params.root_path]
    return [path for path in paths if path]
