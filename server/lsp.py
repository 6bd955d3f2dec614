"""The language server: the LSP handlers and the pygls server they share.

No analysis happens here, and no conversion either.  Handlers keep documents in
sync (incremental sync: a keystroke ships a ranged change, applied by `documents`
with LSP line splitting; pygls' own copy, split with `str.splitlines()`, is never
read), hand checking to the `check_scheduler` (debounce, the two passes,
publishing, release), answer requests from the check of the version they name,
and turn our values into LSP types through `protocol`.

Diagnostics reach a client one way only: pulled (`textDocument/diagnostic`) when
the client declares pull support, pushed (`publishDiagnostics`, with the document
version, debounced while typing) otherwise.  Notebook cells are the exception: their
diagnostics are always pushed, to each cell's URI with the cell's version, and a pull
for a cell (or the notebook) is answered with an empty report.  LSP 3.17 clients
do not pull for cells (vscode-languageclient 9, which VS Code extensions bundle,
never does: microsoft/vscode-languageserver-node#1464), so ruff and ty push for
cells to every client too; and VS Code keeps pushed and pulled diagnostics apart,
so a client that does pull for cells (vscode-languageclient 10) would otherwise
list each finding twice.  Either way they come in two steps where the client
allows it: every rule but the shape rules first, then all of them (a second push;
for a pull client that supports `workspace/diagnostic/refresh`, a refresh, after
which it pulls the complete list).
"""
from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import sys
import traceback
import uuid

from lsprotocol import types as lsp
from pygls.capabilities import get_capability
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol.language_server import lsp_method

from torch_lsp import __version__
from torch_lsp.check_scheduler import CHANGE_DEBOUNCE_S, CONFIGURATION_TIMEOUT_S, CheckScheduler
from torch_lsp.codeactions import FIX_ALL, QUICKFIX, actions_for, build_fix, fix_all_action, fix_offers_at
from torch_lsp.codeactions.shape_annotation import REFACTOR, name_sizes_action
from torch_lsp.caller_proofs import proofs_key
from torch_lsp.dependents import importers_of
from torch_lsp.diagnostics import all_rules
from torch_lsp.documents import CheckedVersion, DocumentSettings, DocumentStore, OpenDocument
from torch_lsp.initialize_result import SERVER_NAME
from torch_lsp.message_framing import ClientStream
from torch_lsp.message_stream import TorchProtocol, serve_stream
from torch_lsp.notebook_sync import (
    NOTEBOOK_SYNC,
    NotebookDocuments,
    add_notebook_features,
    edit_in_cells,
    publish_per_cell,
)
from torch_lsp.protocol import (
    DIAGNOSTIC_SOURCE,
    SETTINGS_SECTION,
    action_data,
    ast_position,
    content_changes,
    diagnostic_span,
    editor_section,
    fix_request_of,
    opened_text,
    settings_message,
    to_code_action,
    to_code_lens,
    to_hover,
    to_inlay_hint,
    unresolved_fix_action,
    unresolved_fix_all_action,
    wants_kind,
    workspace_folders,
)
from torch_lsp.shapes import WorkspaceResolver, infer_shapes, set_default_resolver, shapes_if_inferred
from torch_lsp.shapes.probe.given_inputs import GivenInputs, InputShapeError, parse_input_shapes, render_input_shapes
from torch_lsp.shapes.probe.lenses import PROBE_COMMAND, probe_lenses, suggested_inputs
from torch_lsp.shapes.probe.results import hover_with_memory, hover_with_probe, probed_hint
from torch_lsp.shapes.probe.session import ProbeSession, probe_report_of
from torch_lsp.workspace_diagnostics import WorkspaceDiagnostics


log = logging.getLogger(__name__)


class OwnDocumentsProtocol(TorchProtocol):
    """Our protocol (`message_stream.TorchProtocol`: what pygls would drop is answered)
    without pygls' copy of each open document: `documents` keeps the text.
    pygls splits its copy's lines with `str.splitlines()` and, applying a ranged change to
    it, clamps the change's positions in place, which moved the edit in our copy too (a
    U+2028 earlier in the file was enough); the copy also cost memory and time per change."""

    @lsp_method(lsp.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: lsp.DidOpenTextDocumentParams):
        yield from self._our_handler(lsp.TEXT_DOCUMENT_DID_OPEN, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: lsp.DidChangeTextDocumentParams):
        yield from self._our_handler(lsp.TEXT_DOCUMENT_DID_CHANGE, params)

    @lsp_method(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: lsp.DidCloseTextDocumentParams):
        yield from self._our_handler(lsp.TEXT_DOCUMENT_DID_CLOSE, params)

    def _our_handler(self, method: str, params):
        handler = self.fm.features.get(method)
        if handler is not None:
            yield handler, (params,), None


class TorchLanguageServer(LanguageServer):
    """pygls server plus what torch-lsp keeps between messages."""

    def __init__(self) -> None:
        super().__init__(SERVER_NAME, __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         notebook_document_sync=NOTEBOOK_SYNC, protocol_cls=OwnDocumentsProtocol)
        self.documents = DocumentStore()
        # Open notebooks: each is checked as one program under its own URI (`notebook_sync`).
        self.notebooks = NotebookDocuments()
        self.settings = DocumentSettings()
        self.scheduler = CheckScheduler(self)
        self.workspace_reports = WorkspaceDiagnostics(self)
        self.shown_settings_problems: set[tuple[str, tuple[str, ...]]] = set()
        self.session_token = uuid.uuid4().hex[:8]
        self.init_options: dict = {}
        # The probe runs in the interpreter the editor started us with, unless set otherwise.
        self.probes = ProbeSession(editor_python=sys.executable, given=GivenInputs())
        self.shown_probe_notes: set[str] = set()

    def shutdown(self) -> None:
        """pygls' end of serving (after `exit`, or stdin closed).  pygls would wait here for
        its stdin reader thread, blocked in a read until the client closes the pipe, and the
        interpreter would then wait for a check under way: neither waits, since
        `serve_stdio` ends the process right after."""
        if self._stop_event is not None:
            self._stop_event.set()
        self.scheduler.shutdown()
        self.probes.kill_workers()

    # -- what the client can do ---------------------------------------------
    def client_supports(self, path: str) -> bool:
        return bool(get_capability(self.client_capabilities, path, False))

    @property
    def resolves_edits(self) -> bool:
        """The client can ask for a code action's edit later (`codeAction/resolve`)."""
        support = get_capability(self.client_capabilities, "text_document.code_action.resolve_support", None)
        return support is not None and "edit" in (support.properties or [])

    @property
    def hover_formats(self) -> list[str]:
        formats = get_capability(self.client_capabilities, "text_document.hover.content_format", None)
        return [getattr(f, "value", f) for f in formats or []]

    @property
    def versioned_edits(self) -> bool:
        return self.client_supports("workspace.workspace_edit.document_changes")

    @property
    def pulls_diagnostics(self) -> bool:
        text_document = self.client_capabilities.text_document
        return text_document is not None and text_document.diagnostic is not None

    def pushes_diagnostics(self, uri: str) -> bool:
        """Whether the document's diagnostics are pushed to the client: every document of a
        client that cannot pull, and an open notebook's always (to its cells; see the
        module docstring)."""
        return not self.pulls_diagnostics or self.notebooks.get(uri) is not None

    @property
    def pulls_in_two_steps(self) -> bool:
        """A pull client that pulls again when asked (`workspace/diagnostic/refresh`): like a
        push client, it gets every rule but the shape rules first, then all of them."""
        return self.pulls_diagnostics and self.client_supports("workspace.diagnostics.refresh_support")

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        return getattr(encoding, "value", encoding)

    # -- what the server tells the client ----------------------------------------
    def publish_diagnostics(self, uri: str, diagnostics: list[lsp.Diagnostic], version: int | None) -> None:
        notebook = self.notebooks.get(uri)
        if notebook is not None:
            publish_per_cell(self, notebook, diagnostics)
            return
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    # -- settings -------------------------------------------------------------
    def settings_changed(self) -> None:
        """Editor or project settings changed: check every open document again."""
        self.show_settings_problems(self.settings.editor_problems())
        for document in self.documents.all():
            self.scheduler.check_soon(document.uri, 0)  # only what is pushed
        if self.pulls_diagnostics and self.client_supports("workspace.diagnostics.refresh_support"):
            self.workspace_diagnostic_refresh(None)
        if self.client_supports("workspace.inlay_hint.refresh_support"):
            self.workspace_inlay_hint_refresh(None)  # `shapes.inlayHints` may have changed

    def recheck_importers(self, uri: str, delay: float) -> None:
        """`uri` changed: the open documents importing it are checked again (their checks
        and shapes were computed against its old text)."""
        changed = self.documents.get(uri)
        resolver = getattr(self, "workspace_resolver", None)
        if changed is None or changed.path is None or resolver is None:
            return
        # Runs on the event loop at every edit: only the imports each check collected are
        # read (a light version keeps them), never a document's tree.
        checked = []
        for document in self.documents.all():
            latest = self.scheduler.versions.latest(document.uri)
            if document.uri != uri and latest is not None and latest.imported_modules:
                checked.append((document.uri, document.path, latest.imported_modules))
        stale = importers_of(changed.path, checked, resolver)
        for importer in stale:
            self.scheduler.forget_checks(importer)
            self.scheduler.check_soon(importer, delay)
        if stale and self.pulls_diagnostics and self.client_supports("workspace.diagnostics.refresh_support"):
            self.workspace_diagnostic_refresh(None)
        if stale and self.client_supports("workspace.inlay_hint.refresh_support"):
            self.workspace_inlay_hint_refresh(None)

    async def shape_report(self, uri: str):
        """The shapes of the open document's current version (from the cached analysis), or None."""
        document = self.documents.get(uri)
        if document is None:
            return None, None
        checked = await self.scheduler.analysed(document)
        if checked is None or checked.result is None:
            return document, None
        # Mostly inferred by the complete pass already: then read here, without a round trip
        # through the request thread (two hand-overs of the GIL while checks hold it).
        report = shapes_if_inferred(checked.result.analysis)
        if report is None:
            report = await self.scheduler.on_request_thread(infer_shapes, checked.result.analysis)
        return document, (checked, report)

    def show_settings_problems(self, problems: list[tuple[str, tuple[str, ...]]]) -> None:
        for origin, messages in problems:
            if (origin, messages) in self.shown_settings_problems:
                continue
            self.shown_settings_problems.add((origin, messages))
            # The messages are sentences that already say where and what falls back.
            self.window_show_message(settings_message(messages))

    async def fetch_editor_settings(self) -> dict | None:
        """The `torch-lsp` section from `workspace/configuration`, or None when unavailable."""
        if not self.client_supports("workspace.configuration"):
            return None
        params = lsp.ConfigurationParams(items=[lsp.ConfigurationItem(section=SETTINGS_SECTION)])
        try:
            values = await asyncio.wait_for(self.workspace_configuration_async(params), CONFIGURATION_TIMEOUT_S)
        except Exception:
            self.log_failure("The client did not answer workspace/configuration; keeping the current settings.")
            return None
        value = values[0] if values else None
        return value if isinstance(value, dict) else None

    # -- the shape probe --------------------------------------------------------
    def probe_folders(self, document: OpenDocument) -> list[str]:
        """Where the probe finds the workspace's own modules (`from model import Net`)."""
        folders = list(self.settings.workspace_folders)
        if document.path:
            folders.append(os.path.dirname(os.path.abspath(document.path)))
        return folders

    @contextlib.asynccontextmanager
    async def progress(self, title: str, show: bool):
        """`$/progress` around slow work, for a client that shows it."""
        token = None
        if show and self.client_supports("window.work_done_progress"):
            token = f"torch-lsp-{self.session_token}-{uuid.uuid4().hex[:6]}"
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), CONFIGURATION_TIMEOUT_S)
                self.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title))
            except Exception:
                token = None
        try:
            yield
        finally:
            if token is not None:
                self.work_done_progress.end(token, lsp.WorkDoneProgressEnd())
                self.work_done_progress.tokens.pop(token, None)

    def show_probe_notes(self, analysis) -> None:
        """Say once why something could not be probed (no torch in that Python, a timeout)."""
        report = probe_report_of(analysis)
        for note in report.notes if report is not None else ():
            if note not in self.shown_probe_notes:
                self.shown_probe_notes.add(note)
                self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning,
                                                               message=f"torch-lsp: {note}"))

    # -- reporting ------------------------------------------------------------
    def log_failure(self, what: str) -> None:
        message = f"{what}\n{traceback.format_exc()}"
        log.error(message)
        try:
            self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Error, message=message))
        except Exception:
            log.exception("could not send window/logMessage")


# ------------------------------------------------------------------ code actions
async def quick_fixes(ls: "TorchLanguageServer", document: OpenDocument, checked: CheckedVersion,
                      diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """Rule fixes (edits built now, or on resolve when the client can resolve), then noqa actions."""
    analysis, findings = checked.result.analysis, checked.result.findings
    lines = analysis.lines
    fixes, noqa, seen = [], [], set()
    for diagnostic in diagnostics:
        if diagnostic.range.start.line >= len(lines.lines):
            continue  # out of range: no action, never an error
        code = str(diagnostic.code)
        span = diagnostic_span(diagnostic, lines, ls.encoding)
        offers = await ls.scheduler.on_request_thread(fix_offers_at, analysis, findings, code, span)
        for offer in offers:
            if (offer.title, span) in seen:
                continue
            seen.add((offer.title, span))
            if ls.resolves_edits:
                fixes.append(unresolved_fix_action(offer, span, document, diagnostic))
                continue
            built = await ls.scheduler.on_request_thread(build_fix, analysis, findings, code, span, offer.title)
            if built is not None:
                fixes.append(to_code_action(built, document, lines, ls.encoding, diagnostic, ls.versioned_edits))
        for action in actions_for(analysis, code, diagnostic.range.start.line + 1):
            if (action.title, action.edits) not in seen:
                seen.add((action.title, action.edits))
                noqa.append(to_code_action(action, document, lines, ls.encoding, diagnostic, ls.versioned_edits))
    return fixes + noqa


async def name_sizes_actions(ls: "TorchLanguageServer", document: OpenDocument, checked: CheckedVersion,
                             position: lsp.Position) -> list[lsp.CodeAction]:
    """"Name the sizes of `x`" on a tensor binding whose shape has unknown sizes."""
    lines = checked.result.analysis.lines
    if position.line >= len(lines.lines):
        return []
    byte_col = lines.byte_from_client(position.line, position.character, ls.encoding)
    action = await ls.scheduler.on_request_thread(_name_sizes_action, checked.result.analysis, position.line + 1,
                                                   byte_col)
    return [to_code_action(action, document, lines, ls.encoding, None, ls.versioned_edits)] if action else []


def _name_sizes_action(analysis, line: int, byte_col: int):
    return name_sizes_action(analysis, infer_shapes(analysis), line, byte_col)


async def fix_all_code_action(ls: "TorchLanguageServer", document: OpenDocument, checked: CheckedVersion,
                              lazy: bool) -> lsp.CodeAction | None:
    """`source.fixAll.torch-lsp`: every safe fix in one edit (left to resolve when `lazy`)."""
    if lazy:
        return unresolved_fix_all_action(document)
    settings, _ = ls.settings.settings_for(document.path, ls.settings.generation)
    action = await ls.scheduler.on_request_thread(fix_all_action, document.text, document.path, settings)
    if action is None:
        return None
    return to_code_action(action, document, checked.result.analysis.lines, ls.encoding, None, ls.versioned_edits)


# ------------------------------------------------------------------ features
def create_server() -> TorchLanguageServer:
    server = TorchLanguageServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: TorchLanguageServer, params: lsp.InitializeParams) -> None:
        ls.init_options = editor_section(params.initialization_options)
        ls.settings.workspace_folders = workspace_folders(params)
        ls.probes.workspace = ls.settings.workspace_folders[0] if ls.settings.workspace_folders else None
        # Shapes follow imported model classes into other files of the workspace, open
        # ones as the editor has them.
        ls.workspace_resolver = WorkspaceResolver(ls.settings.workspace_folders, ls.documents.open_text_of)
        set_default_resolver(ls.workspace_resolver)
        ls.settings.set_editor(ls.init_options)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: TorchLanguageServer, params: lsp.InitializedParams) -> None:
        ls.scheduler.warm_up()
        register_watchers(ls)
        configured = None
        try:
            configured = await ls.fetch_editor_settings()
            if configured is not None:
                # The client's answer is the whole truth: a key it left out was removed.
                ls.settings.set_editor(configured or ls.init_options)
        finally:
            # Set already only when checks stopped waiting for a client that was slow to answer.
            checked_without_configuration = ls.scheduler.settings_ready.is_set()
            ls.scheduler.settings_ready.set()
        if configured is not None and checked_without_configuration:
            ls.settings_changed()
        else:
            ls.show_settings_problems(ls.settings.editor_problems())

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: TorchLanguageServer, params: None) -> None:
        ls.scheduler.shutdown()
        ls.probes.kill_workers()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.scheduler.opened(ls.documents.open(item.uri, item.version, opened_text(item)))

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        changes = content_changes(params)
        if ls.documents.change(uri, params.text_document.version, changes, ls.encoding) is not None:
            ls.scheduler.check_after_edit(uri)
            ls.recheck_importers(uri, CHANGE_DEBOUNCE_S)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TorchLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.scheduler.check_soon(params.text_document.uri, 0)
        ls.recheck_importers(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.documents.close(uri)
        ls.scheduler.closed(uri)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
        lsp.DiagnosticOptions(identifier=SERVER_NAME, inter_file_dependencies=True, workspace_diagnostics=True),
    )
    async def document_diagnostic(ls: TorchLanguageServer, params: lsp.DocumentDiagnosticParams):
        uri = params.text_document.uri
        if ls.notebooks.owns(uri):
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])  # a notebook's are pushed to its cells
        checked, complete = await ls.scheduler.pulled(uri)
        if checked is None:
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])
        document = ls.documents.get(params.text_document.uri)
        proven = ls.scheduler.proven_by_callers(document, checked) if document is not None else []
        # The first step's answer has an id of its own, so that pulling again after the
        # refresh is never answered "unchanged"; errors proven by callers count too.
        result_id = (f"{ls.session_token}:{checked.version}:{checked.generation}"
                     f":{ls.scheduler.rechecks.get(params.text_document.uri, 0)}:{proofs_key(proven)}"
                     + ("" if complete else ":first"))
        if params.previous_result_id == result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return lsp.RelatedFullDocumentDiagnosticReport(items=checked.diagnostics + proven, result_id=result_id)

    @server.feature(lsp.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(ls: TorchLanguageServer, params: lsp.WorkspaceDiagnosticParams):
        return await ls.workspace_reports.report(params)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL, REFACTOR],
                              resolve_provider=True),
    )
    async def code_action(ls: TorchLanguageServer, params: lsp.CodeActionParams):
        cell = ls.notebooks.place_of(params.text_document.uri)  # a notebook cell: act on the program
        document = ls.documents.get(cell.notebook_uri if cell else params.text_document.uri)
        if document is None:
            return []
        only = params.context.only
        rules = all_rules()
        ours = [d for d in params.context.diagnostics if d.source == DIAGNOSTIC_SOURCE and d.code in rules]
        if cell is not None:
            ours = [cell.diagnostic_to_program(d) for d in ours]
        wants_fixes = wants_kind(only, QUICKFIX) and bool(ours)
        wants_fix_all = wants_kind(only, FIX_ALL) and (bool(only) or ls.resolves_edits)
        wants_refactor = wants_kind(only, REFACTOR)
        if not wants_fixes and not wants_fix_all and not wants_refactor:
            return []
        try:
            checked = await ls.scheduler.analysed(document)
        except Exception:
            ls.log_failure(f"Checking {document.uri} for code actions failed.")
            return []
        if checked is None or checked.result is None:
            return []
        actions = await quick_fixes(ls, document, checked, ours) if wants_fixes else []
        if wants_refactor:
            actions.extend(await name_sizes_actions(ls, document, checked, params.range.start))
        if wants_fix_all and any(f.fix and f.fix.safety == "safe" for f in checked.result.findings):
            fix_all = await fix_all_code_action(ls, document, checked, lazy=ls.resolves_edits and not only)
            if fix_all is not None:
                actions.append(fix_all)
        if cell is not None:
            actions = cell.actions_in_cell(actions, ls.encoding, ls.versioned_edits)
        return actions

    @server.feature(lsp.CODE_ACTION_RESOLVE)
    async def resolve_code_action(ls: TorchLanguageServer, action: lsp.CodeAction) -> lsp.CodeAction:
        data = action_data(action)
        document = ls.documents.get(data.get("uri", ""))
        if document is None or document.version != data.get("version") or action.edit is not None:
            return action  # the document moved on: an edit now could land in the wrong place
        try:
            checked = await ls.scheduler.analysed(document)
        except Exception:
            ls.log_failure(f"Resolving {action.title!r} failed.")
            return action
        if checked is None or checked.result is None:
            return action
        if action.kind == FIX_ALL:
            resolved = await fix_all_code_action(ls, document, checked, lazy=False)
            action.edit = resolved.edit if resolved is not None else None
        else:
            built = await ls.scheduler.on_request_thread(build_fix, checked.result.analysis, checked.result.findings,
                                                         *fix_request_of(action, data))
            if built is not None:
                action.edit = to_code_action(built, document, checked.result.analysis.lines, ls.encoding, None,
                                             ls.versioned_edits).edit
        notebook = ls.notebooks.get(document.uri)  # the edit of a notebook's program goes to its cells
        if notebook is not None and action.edit is not None:
            action.edit = edit_in_cells(notebook, action.edit, ls.encoding, ls.versioned_edits)
        return action

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: TorchLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
        cell = ls.notebooks.place_of(params.text_document.uri)  # a notebook cell: hover on the program
        if cell is not None:
            params = lsp.HoverParams(lsp.TextDocumentIdentifier(cell.notebook_uri), cell.to_program(params.position))
            return cell.hover_in_cell(await hover(ls, params))
        try:
            document, found = await ls.shape_report(params.text_document.uri)
        except Exception:
            ls.log_failure(f"Hover in {params.text_document.uri} failed.")
            return None
        if found is None:
            return None
        checked, report = found
        lines = checked.result.analysis.lines
        position = params.position
        if position.line >= len(lines.lines):
            return None
        answer = report.hover(*ast_position(position, lines, ls.encoding))
        if answer is None:
            return None
        probe = probe_report_of(checked.result.analysis)
        if probe is not None:
            binding = report.binding_at(answer.line, answer.col)
            markdown = hover_with_probe(answer.markdown, probe, binding)
            markdown = hover_with_memory(markdown, probe, report.class_named_at(answer.line, answer.col))
            answer = dataclasses.replace(answer, markdown=markdown)
        return to_hover(answer, lines, ls.encoding, ls.hover_formats)

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    async def inlay_hints(ls: TorchLanguageServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
        cell = ls.notebooks.place_of(params.text_document.uri)  # a notebook cell: the program's hints in it
        if cell is not None:
            params = lsp.InlayHintParams(lsp.TextDocumentIdentifier(cell.notebook_uri),
                                         cell.range_to_program(params.range))
            return cell.hints_in_cell(await inlay_hints(ls, params))
        document = ls.documents.get(params.text_document.uri)
        if document is None:
            return []
        settings, _ = ls.settings.settings_for(document.path, ls.settings.generation)
        if not settings.inlay_hints:
            return []
        try:
            _, found = await ls.shape_report(document.uri)
        except Exception:
            ls.log_failure(f"Inlay hints for {document.uri} failed.")
            return []
        if found is None:
            return []
        checked, report = found
        lines = checked.result.analysis.lines
        first, last = params.range.start.line + 1, params.range.end.line + 1
        hints = [hint for hint in report.inlay_hints() if first <= hint.line <= last]
        probe = probe_report_of(checked.result.analysis)
        if probe is not None:
            hints = [probed_hint(hint, probe, report.binding_after(hint.line, hint.col)) for hint in hints]
        return [to_inlay_hint(hint, lines, ls.encoding) for hint in hints]

    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
    async def code_lenses(ls: TorchLanguageServer, params: lsp.CodeLensParams) -> list[lsp.CodeLens]:
        """"Probe shapes…" over each module class, when the probe is enabled."""
        document = ls.documents.get(params.text_document.uri)
        if document is None:
            return []
        settings, _ = ls.settings.settings_for(document.path, ls.settings.generation)
        if not settings.probe_enabled:
            return []
        checked = await ls.scheduler.checked(document)
        if checked is None or checked.result is None:
            return []
        analysis = checked.result.analysis
        lenses = probe_lenses(analysis, ls.probes.given.for_file(document.path), probe_report_of(analysis))
        return [to_code_lens(lens, document.uri, analysis.lines, ls.encoding) for lens in lenses]

    @server.command(PROBE_COMMAND)
    async def probe_shapes(ls: TorchLanguageServer, *arguments) -> dict | None:
        """Arguments: the document URI, a module class name and, optionally, the input shape
        (`[B, 3, 32, 32]`); without one the server offers the shapes it can suggest."""
        return await ask_and_probe(ls, list(arguments))

    add_notebook_features(server)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TorchLanguageServer, params: lsp.DidChangeConfigurationParams) -> None:
        # Checks and pulls that arrive while the new settings are fetched wait for them.
        ls.scheduler.settings_ready.clear()
        try:
            configured = await ls.fetch_editor_settings()
            if configured is None:
                configured = editor_section(params.settings) if params.settings else ls.init_options
            ls.settings.set_editor(configured)
        finally:
            ls.scheduler.settings_ready.set()
        ls.settings_changed()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TorchLanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.rstrip("/").endswith("/pyproject.toml") for change in params.changes):
            ls.settings.invalidate()
            ls.settings_changed()

    return server


async def ask_and_probe(ls: TorchLanguageServer, arguments: list) -> dict | None:
    """The "Probe shapes…" command: get an input shape for a class (given, or picked from
    suggestions), remember it and check the document again, which probes the class on it."""
    uri, class_name = (arguments + [None, None])[:2]
    text = arguments[2] if len(arguments) > 2 else None
    document = ls.documents.get(uri) if isinstance(uri, str) else None
    if document is None or not isinstance(class_name, str):
        raise JsonRpcInvalidParams(f"{PROBE_COMMAND} takes an open document's URI and a module class name")
    settings, _ = ls.settings.settings_for(document.path, ls.settings.generation)
    if not settings.probe_enabled:
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=(
            "torch-lsp: the shape probe is off; turn on `probe.enabled` (it runs your model classes in "
            "your own Python) to probe shapes.")))
        return None
    if not isinstance(text, str) or not text.strip():
        text = await pick_suggested_input(ls, document, class_name)
        if text is None:
            return None
    try:
        inputs = parse_input_shapes(text)
    except InputShapeError as error:
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"torch-lsp: {error}"))
        return None
    ls.probes.given.remember(document.path or uri, class_name, inputs)
    checked = await ls.scheduler.checked(document)
    if checked is not None:
        ls.scheduler.probe_again(document, checked)
    return {"class": class_name, "inputs": render_input_shapes(inputs)}


async def pick_suggested_input(ls: TorchLanguageServer, document: OpenDocument, class_name: str) -> str | None:
    """Offer the shapes the class's first layers suggest (`window/showMessageRequest`);
    where there are none, say how to give one."""
    _, found = await ls.shape_report(document.uri)
    suggestions = suggested_inputs(found[1], class_name) if found is not None else []
    if not suggestions or not ls.client_supports("window.show_message.message_action_item"):
        ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Info, message=(
            f"torch-lsp: give `{class_name}`'s input shape as the command's third argument "
            f"(`[B, 3, 32, 32]`; a leading name is the batch), or state it in a comment on `forward`: "
            f"`def forward(self, x):  # x: [B, 3, 32, 32]`.")))
        return None
    answer = await ls.window_show_message_request_async(lsp.ShowMessageRequestParams(
        type=lsp.MessageType.Info, message=f"torch-lsp: probe `{class_name}` on which input shape?",
        actions=[lsp.MessageActionItem(title=text) for text in suggestions]))
    return answer.title if answer is not None else None


def register_watchers(ls: TorchLanguageServer) -> None:
    """Ask the client to report `pyproject.toml` changes (and settings changes) when it
    lets servers register for them."""
    registrations = []
    if ls.client_supports("workspace.did_change_watched_files.dynamic_registration"):
        options = lsp.DidChangeWatchedFilesRegistrationOptions(
            watchers=[lsp.FileSystemWatcher(glob_pattern="**/pyproject.toml")]
        )
        registrations.append(
            lsp.Registration(id=f"{SERVER_NAME}-pyproject", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)
        )
    if ls.client_supports("workspace.did_change_configuration.dynamic_registration"):
        registrations.append(
            lsp.Registration(id=f"{SERVER_NAME}-configuration", method=lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
        )
    if not registrations:
        return

    def registered(future) -> None:
        if not future.cancelled() and future.exception() is not None:
            log.warning("the client refused dynamic registration: %s", future.exception())

    future = ls.client_register_capability(lsp.RegistrationParams(registrations=registrations))
    future.add_done_callback(registered)


def serve_stdio(stream: ClientStream, answered_early: dict) -> int:
    """Serve LSP over stdin/stdout, from where the start-up path (`startup`) leaves the
    client's stream, until the client says exit; the process's exit code (1 for an
    `exit` without `shutdown`).  `answered_early`: {request id: result} the start-up
    path answered already (`initialize`)."""
    server = create_server()
    server.protocol.answered_early.update(answered_early)
    code = 1
    try:
        code = serve_stream(server.protocol, stream, sys.stdout.buffer)
    except Exception:
        log.exception("the server stopped on an internal error")
    finally:
        server.shutdown()
        # Leave at once: the interpreter's own exit would wait for every thread, a check
        # under way included (seconds).  Nothing is left to save: messages are flushed as
        # they are written, and the probe worker is killed by `shutdown`.
        for output in (sys.stdout, sys.stderr):
            with contextlib.suppress(ValueError, OSError):
                output.flush()
        os._exit(code)
