"""The language server: LSP wiring over `checker`, `codeactions` and `settings`.

No analysis happens here.  This module keeps documents in sync (whole-text sync,
so pygls' `str.splitlines()`-based incremental edits are never used), runs
`check_source` off the event loop, converts findings into the client's column
unit, and answers requests from the per-version cache.

Diagnostics reach a client one way only: pulled (`textDocument/diagnostic`) when
the client declares pull support, pushed (`publishDiagnostics`, with the document
version, debounced while typing) otherwise.  Either way they come in two steps
where the client allows it: every rule but the shape rules first, then all of them
(a second push; for a pull client that supports `workspace/diagnostic/refresh`, a
refresh, after which it pulls the complete list).
"""
from __future__ import annotations

import asyncio
import gc
import logging
import sys
import time
import traceback
import uuid
from functools import partial
from concurrent.futures import ThreadPoolExecutor

from lsprotocol import types as lsp
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from server import DOCS_URL, __version__
from server.checker import SYNTAX_ERROR_CODE, add_shape_findings, check_source, collector_paused
from server.codeactions import (
    FIX_ALL,
    FIX_ALL_TITLE,
    QUICKFIX,
    Action,
    Positions,
    actions_for,
    build_fix,
    fix_all_action,
    fix_offers_at,
)
from server.diagnostics import all_rules
from server.shapes import WorkspaceResolver, infer_shapes, set_default_resolver
from server.documents import (
    CheckCache,
    CheckedVersion,
    Debouncer,
    DocumentSettings,
    DocumentStore,
    OpenDocument,
    path_from_uri,
    release_versions,
)

SERVER_NAME = "torch-lsp"
SETTINGS_SECTION = "torch-lsp"
DIAGNOSTIC_SOURCE = "torch-lsp"
CHANGE_DEBOUNCE_S = 0.075
CONFIGURATION_TIMEOUT_S = 5.0
MAX_DOCUMENT_CHARS = 5_000_000
MAX_DOCUMENT_LINES = 100_000
TOO_LARGE_CODE = "file-too-large"
GARBAGE_COLLECTION_INTERVAL_S = 2.0

_SEVERITIES = {
    "error": lsp.DiagnosticSeverity.Error,
    "warning": lsp.DiagnosticSeverity.Warning,
    "information": lsp.DiagnosticSeverity.Information,
    "hint": lsp.DiagnosticSeverity.Hint,
}

log = logging.getLogger(__name__)


class TorchLanguageServer(LanguageServer):
    """pygls server plus what torch-lsp keeps between messages."""

    def __init__(self) -> None:
        super().__init__(SERVER_NAME, __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Full)
        self.documents = DocumentStore()
        self.checks = CheckCache()
        self.settings = DocumentSettings()
        self.debouncer = Debouncer()
        # One worker: analyses queue behind each other instead of fighting for the GIL.
        self.analysis_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torch-lsp-analysis")
        self.settings_ready = asyncio.Event()
        self.running_checks: dict[tuple, asyncio.Future] = {}
        self.running_first_passes: dict[tuple, asyncio.Future] = {}
        self.background_tasks: set[asyncio.Task] = set()
        self.shown_settings_problems: set[tuple[str, tuple[str, ...]]] = set()
        self.session_token = uuid.uuid4().hex[:8]
        self.init_options: dict = {}
        self.last_collection = 0.0

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

    @property
    def pulls_in_two_steps(self) -> bool:
        """A pull client that pulls again when asked (`workspace/diagnostic/refresh`): like a
        push client, it gets every rule but the shape rules first, then all of them."""
        return self.pulls_diagnostics and self.client_supports("workspace.diagnostics.refresh_support")

    @property
    def encoding(self) -> str:
        encoding = self.workspace.position_encoding or lsp.PositionEncodingKind.Utf16
        return getattr(encoding, "value", encoding)

    # -- checking -------------------------------------------------------------
    async def checked(self, document: OpenDocument, first_pass: CheckedVersion | None = None) -> CheckedVersion | None:
        """The check of this document version under the current settings: from the
        cache, from a check already running, or a new one on the analysis thread
        (completing `first_pass`, a check without the shape rules, when given).
        None when the document changed before its check started."""
        await self._settings_settled()
        generation = self.settings.generation
        cached = self.checks.get(document.uri, document.version, generation)
        if cached is not None:
            return cached
        # Shielded: a cancelled waiter (a restarted debounce) must not cancel the check others share.
        return await asyncio.shield(self._start_check(document, generation, first_pass))

    def _start_check(self, document: OpenDocument, generation: int,
                     first_pass: CheckedVersion | None = None) -> asyncio.Future:
        """The complete check of this version that is running, started here if none is."""
        key = (document.uri, document.version, generation)
        running = self.running_checks.get(key)
        if running is None:
            loop = asyncio.get_running_loop()
            running = loop.run_in_executor(self.analysis_executor, self._check, document, generation, first_pass)
            self.running_checks[key] = running
            running.add_done_callback(lambda future: self._check_done(key, future))
        return running

    async def first_pass(self, document: OpenDocument) -> CheckedVersion | None:
        """This version checked by every rule but the shape rules (most of the findings,
        sooner), shared by whoever asks meanwhile.  Its complete check starts on the same
        analysis as soon as it is done."""
        await self._settings_settled()
        generation = self.settings.generation
        key = (document.uri, document.version, generation)
        running = self.running_first_passes.get(key)
        if running is None:
            loop = asyncio.get_running_loop()
            running = loop.run_in_executor(
                self.analysis_executor, partial(self._check, document, generation, None, False))
            self.running_first_passes[key] = running
            running.add_done_callback(lambda future: self._first_pass_done(key, document, generation, future))
        return await asyncio.shield(running)

    def _first_pass_done(self, key, document: OpenDocument, generation: int, future: asyncio.Future) -> None:
        # Runs before anyone awaiting the first pass resumes: from then on the complete
        # check is running, so nobody starts a second one.
        self.running_first_passes.pop(key, None)
        if future.cancelled() or future.exception() is not None or future.result() is None:
            return
        if self.documents.get(document.uri) is document:
            self._start_check(document, generation, future.result())

    def _check_done(self, key, future: asyncio.Future) -> None:
        self.running_checks.pop(key, None)
        if future.cancelled() or future.exception() is not None or future.result() is None:
            return
        checked = future.result()
        if self.documents.get(key[0]) is None:
            # Closed while it was checked: caching it would keep it for as long as the server runs.
            self.release_later([checked])
            return
        self.release_later(self.checks.put(key[0], checked))
        self.show_settings_problems(checked.settings_problems)

    async def _settings_settled(self) -> None:
        try:
            await asyncio.wait_for(self.settings_ready.wait(), CONFIGURATION_TIMEOUT_S)
        except asyncio.TimeoutError:
            self.settings_ready.set()  # the client never answered: go on with what we have

    def _check(self, document: OpenDocument, generation: int, first_pass: CheckedVersion | None = None,
               shapes: bool = True) -> CheckedVersion | None:
        """Runs on the analysis thread.  `shapes=False` leaves out the rules that need the
        shape pass; `first_pass` is such a check of this version, completed here."""
        if self.documents.get(document.uri) is not document:
            return None  # edited or closed while this check waited for the thread
        if is_too_large(document.text):
            return CheckedVersion(document.version, generation, None, [too_large_diagnostic(document.text)])
        settings, problems = self.settings.settings_for(document.path, generation)
        with collector_paused():
            if first_pass is not None and first_pass.result is not None and first_pass.generation == generation:
                result = add_shape_findings(first_pass.result, settings)
            else:
                result = check_source(document.text, document.path, settings, shapes=shapes)
            lines = result.analysis.lines
            diagnostics = [to_diagnostic(finding, lines, self.encoding) for finding in result.findings]
            # The check's objects would otherwise be walked by the collector's young-generation
            # passes as soon as it resumes (about 13 ms for 2,000 lines, before this version is
            # published).  Frozen, they are left to the periodic full collection, which
            # unfreezes first; what a version holds is freed by reference counting anyway.
            gc.freeze()
        return CheckedVersion(document.version, generation, result, diagnostics, problems)

    async def check_and_publish(self, uri: str) -> None:
        """Push diagnostics in two steps: every rule but the shape rules first (most of the
        findings, sooner), then all of them once the shape pass has run on the same analysis."""
        document = self.documents.get(uri)
        if document is None:
            return
        try:
            first_pass = None
            if not self.is_checked_or_running(document):
                first_pass = await self.first_pass(document)
                if first_pass is not None:
                    self.publish_if_current(document, first_pass)
            checked = await self.checked(document, first_pass)
        except asyncio.CancelledError:
            raise
        except Exception:
            self.log_failure(f"Checking {uri} failed; its previous diagnostics stay.")
            return
        if checked is not None and (first_pass is None or checked.diagnostics != first_pass.diagnostics):
            self.publish_if_current(document, checked)
        self.collect_garbage_when_idle()

    def refresh_when_complete(self, document: OpenDocument, first_pass: CheckedVersion) -> None:
        """After a pull was answered with `first_pass`: once the complete check of that version
        is done, ask the client to pull again if the shape rules changed the list."""
        async def refresh() -> None:
            try:
                checked = await self.checked(document, first_pass)
            except Exception:
                self.log_failure(f"Checking {document.uri} failed; its first diagnostics stay.")
                return
            if (checked is not None and checked.diagnostics != first_pass.diagnostics
                    and self.documents.get(document.uri) is document
                    and checked.generation == self.settings.generation):
                self.workspace_diagnostic_refresh(None)
            self.collect_garbage_when_idle()

        task = asyncio.get_running_loop().create_task(refresh())
        self.background_tasks.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self.background_tasks.discard)

    def release_later(self, versions: list[CheckedVersion]) -> None:
        """Free versions pushed out of the cache, on the analysis thread after queued work."""
        if not versions:
            return
        try:
            self.analysis_executor.submit(release_versions, versions)
        except RuntimeError:
            pass  # shutting down: the process frees everything

    def collect_garbage_when_idle(self) -> None:
        """A full collection for what reference counting does not free: the few small cycles
        a dropped version leaves, and every check's objects, which `_check` freezes.  Runs on
        the analysis thread, at most every few seconds, and only when no check is waiting."""
        now = time.monotonic()
        if self.running_checks or now - self.last_collection < GARBAGE_COLLECTION_INTERVAL_S:
            return
        self.last_collection = now
        asyncio.get_running_loop().run_in_executor(self.analysis_executor, collect_everything)

    def is_checked_or_running(self, document: OpenDocument) -> bool:
        key = (document.uri, document.version, self.settings.generation)
        return self.checks.get(*key) is not None or key in self.running_checks

    def publish_if_current(self, document: OpenDocument, checked: CheckedVersion) -> None:
        current = self.documents.get(document.uri)
        if current is None or current.version != document.version:
            return  # the text moved on; the check of the newer version publishes
        if checked.generation != self.settings.generation:
            return  # settings changed meanwhile; a new check is already scheduled
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=document.uri, diagnostics=checked.diagnostics, version=document.version)
        )

    def schedule_check(self, uri: str, delay: float) -> None:
        if not self.pulls_diagnostics:
            self.debouncer.schedule(uri, delay, lambda: self.check_and_publish(uri))

    async def checked_latest(self, uri: str) -> CheckedVersion | None:
        """The check of the document's newest version, following edits made meanwhile."""
        checked = None
        for _ in range(5):
            document = self.documents.get(uri)
            if document is None:
                return checked
            fresh = await self.checked(document)
            if fresh is not None:
                checked = fresh
                if self.documents.get(uri) is document:
                    return fresh
        return checked

    # -- settings -------------------------------------------------------------
    def settings_changed(self) -> None:
        """Editor or project settings changed: check every open document again."""
        self.show_settings_problems(self.settings.editor_problems())
        if not self.pulls_diagnostics:
            for document in self.documents.all():
                self.schedule_check(document.uri, 0)
        elif self.client_supports("workspace.diagnostics.refresh_support"):
            self.workspace_diagnostic_refresh(None)
        if self.client_supports("workspace.inlay_hint.refresh_support"):
            self.workspace_inlay_hint_refresh(None)  # `shapes.inlayHints` may have changed

    async def shape_report(self, uri: str):
        """The shapes of the open document's current version (from the cached analysis), or None."""
        document = self.documents.get(uri)
        if document is None:
            return None, None
        checked = await self.checked(document)
        if checked is None or checked.result is None:
            return document, None
        loop = asyncio.get_running_loop()
        report = await loop.run_in_executor(self.analysis_executor, infer_shapes, checked.result.analysis)
        return document, (checked, report)

    def show_settings_problems(self, problems: list[tuple[str, tuple[str, ...]]]) -> None:
        for origin, messages in problems:
            if (origin, messages) in self.shown_settings_problems:
                continue
            self.shown_settings_problems.add((origin, messages))
            # The messages are sentences that already say where and what falls back.
            text = " ".join(messages)
            self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Warning, message=f"torch-lsp: {text}"))

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

    # -- reporting ------------------------------------------------------------
    def log_failure(self, what: str) -> None:
        message = f"{what}\n{traceback.format_exc()}"
        log.error(message)
        try:
            self.window_log_message(lsp.LogMessageParams(type=lsp.MessageType.Error, message=message))
        except Exception:
            log.exception("could not send window/logMessage")


def collect_everything() -> None:
    """A full collection, including what checks froze (see `_check`)."""
    gc.unfreeze()
    gc.collect()


# ------------------------------------------------------------------ conversion
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


def to_diagnostic(finding, lines, encoding: str) -> lsp.Diagnostic:
    """An LSP diagnostic for a finding, its columns in the client's unit."""
    is_rule = finding.code != SYNTAX_ERROR_CODE
    return lsp.Diagnostic(
        range=ast_range(finding.line, finding.col, finding.end_line, finding.end_col, lines, encoding),
        message=finding.message,
        severity=_SEVERITIES.get(finding.severity, lsp.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=lsp.CodeDescription(href=f"{DOCS_URL}#{finding.code.lower()}") if is_rule else None,
        source=DIAGNOSTIC_SOURCE,
        data={
            "fix": {"title": finding.fix.title, "safety": finding.fix.safety} if finding.fix else None,
            "detail": finding.data,
        },
    )


def to_code_action(action: Action, document: OpenDocument, lines, encoding: str, diagnostic, versioned: bool) -> lsp.CodeAction:
    positions = Positions(lines.source)  # the edits are offsets into the text `lines` indexes
    edits = [
        lsp.TextEdit(
            range=lsp.Range(
                start=client_position(positions.position(edit.start), lines, encoding),
                end=client_position(positions.position(edit.end), lines, encoding),
            ),
            new_text=edit.new_text,
        )
        for edit in action.edits
    ]
    if versioned:
        identifier = lsp.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version)
        edit = lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=identifier, edits=edits)])
    else:
        edit = lsp.WorkspaceEdit(changes={document.uri: edits})
    return lsp.CodeAction(
        title=action.title, kind=action.kind, diagnostics=[diagnostic] if diagnostic is not None else None,
        edit=edit, is_preferred=action.preferred or None,
    )


def client_position(position: tuple[int, int], lines, encoding: str) -> lsp.Position:
    """An LSP position for a 1-based line and code-point column."""
    line, column = position
    return lsp.Position(line=line - 1, character=lines.client_column_from_char(line - 1, column, encoding))


def wants_kind(only: list[str] | None, kind: str) -> bool:
    """Whether a `context.only` filter admits actions of `kind` (kinds are dot-hierarchies)."""
    if not only:
        return True
    return any(wanted in ("", kind) or kind.startswith(f"{wanted}.") for wanted in only)


def editor_section(options) -> dict:
    """Settings from initializationOptions or didChangeConfiguration: either the
    settings themselves or wrapped as {"torch-lsp": {...}}."""
    if not isinstance(options, dict):
        return {}
    inner = options.get(SETTINGS_SECTION)
    return inner if isinstance(inner, dict) else options


def ast_range(line: int, col: int, end_line: int, end_col: int, lines, encoding: str) -> lsp.Range:
    """An LSP range for an ast range (1-based lines, UTF-8 byte columns)."""
    return lsp.Range(
        start=lsp.Position(line=line - 1, character=lines.client_column(line, col, encoding)),
        end=lsp.Position(line=end_line - 1, character=lines.client_column(end_line, end_col, encoding)),
    )


def hover_contents(markdown: str, formats: list[str]) -> lsp.MarkupContent:
    """Markdown, or plain text (code fences dropped) for a client that only takes plain text."""
    if not formats or lsp.MarkupKind.Markdown.value in formats:
        return lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown)
    plain = "\n".join(line for line in markdown.splitlines() if not line.startswith("```"))
    return lsp.MarkupContent(kind=lsp.MarkupKind.PlainText, value=plain.replace("`", ""))


def diagnostic_span(diagnostic: lsp.Diagnostic, lines, encoding: str) -> tuple[int, int, int, int]:
    """The ast range (1-based lines, UTF-8 byte columns) of a client's diagnostic."""
    start, end = diagnostic.range.start, diagnostic.range.end
    return (
        lines.clamp_line(start.line) + 1, lines.byte_from_client(start.line, start.character, encoding),
        lines.clamp_line(end.line) + 1, lines.byte_from_client(end.line, end.character, encoding),
    )


async def quick_fixes(ls: "TorchLanguageServer", document: OpenDocument, checked: CheckedVersion,
                      diagnostics: list[lsp.Diagnostic]) -> list[lsp.CodeAction]:
    """Rule fixes (edits built now, or on resolve when the client can resolve), then noqa actions."""
    analysis, findings = checked.result.analysis, checked.result.findings
    lines = analysis.lines
    loop = asyncio.get_running_loop()
    fixes, noqa, seen = [], [], set()
    for diagnostic in diagnostics:
        if diagnostic.range.start.line >= len(lines.lines):
            continue  # out of range: no action, never an error
        code = str(diagnostic.code)
        span = diagnostic_span(diagnostic, lines, ls.encoding)
        offers = await loop.run_in_executor(ls.analysis_executor, fix_offers_at, analysis, findings, code, span)
        for offer in offers:
            if (offer.title, span) in seen:
                continue
            seen.add((offer.title, span))
            if ls.resolves_edits:
                fixes.append(lsp.CodeAction(
                    title=offer.title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diagnostic],
                    is_preferred=offer.preferred or None,
                    data={"uri": document.uri, "version": document.version, "code": code,
                          "safety": offer.safety, "span": list(span)},
                ))
                continue
            built = await loop.run_in_executor(ls.analysis_executor, build_fix, analysis, findings, code, span,
                                               offer.title)
            if built is not None:
                fixes.append(to_code_action(built, document, lines, ls.encoding, diagnostic, ls.versioned_edits))
        for action in actions_for(analysis, code, diagnostic.range.start.line + 1):
            if (action.title, action.edits) not in seen:
                seen.add((action.title, action.edits))
                noqa.append(to_code_action(action, document, lines, ls.encoding, diagnostic, ls.versioned_edits))
    return fixes + noqa


async def fix_all_code_action(ls: "TorchLanguageServer", document: OpenDocument, checked: CheckedVersion,
                              lazy: bool) -> lsp.CodeAction | None:
    """`source.fixAll.torch-lsp`: every safe fix in one edit (left to resolve when `lazy`)."""
    if lazy:
        return lsp.CodeAction(title=FIX_ALL_TITLE, kind=FIX_ALL,
                              data={"uri": document.uri, "version": document.version})
    settings, _ = ls.settings.settings_for(document.path, ls.settings.generation)
    loop = asyncio.get_running_loop()
    action = await loop.run_in_executor(ls.analysis_executor, fix_all_action, document.text, document.path, settings)
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
        # Shapes follow imported model classes into other files of the workspace.
        set_default_resolver(WorkspaceResolver(ls.settings.workspace_folders))
        ls.settings.set_editor(ls.init_options)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: TorchLanguageServer, params: lsp.InitializedParams) -> None:
        register_watchers(ls)
        configured = None
        try:
            configured = await ls.fetch_editor_settings()
            if configured is not None:
                # The client's answer is the whole truth: a key it left out was removed.
                ls.settings.set_editor(configured or ls.init_options)
        finally:
            # Set already only when checks stopped waiting for a client that was slow to answer.
            checked_without_configuration = ls.settings_ready.is_set()
            ls.settings_ready.set()
        if configured is not None and checked_without_configuration:
            ls.settings_changed()
        else:
            ls.show_settings_problems(ls.settings.editor_problems())

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: TorchLanguageServer, params: None) -> None:
        ls.analysis_executor.shutdown(wait=False, cancel_futures=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TorchLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        ls.documents.open(item.uri, item.version, item.text)
        ls.schedule_check(item.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TorchLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        changes = []
        for change in params.content_changes:
            change_range = getattr(change, "range", None)
            if change_range is not None:
                change_range = (
                    (change_range.start.line, change_range.start.character),
                    (change_range.end.line, change_range.end.character),
                )
            changes.append((change_range, change.text))
        uri = params.text_document.uri
        if ls.documents.change(uri, params.text_document.version, changes, ls.encoding) is not None:
            ls.schedule_check(uri, CHANGE_DEBOUNCE_S)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TorchLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        ls.schedule_check(params.text_document.uri, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TorchLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.debouncer.cancel(uri)
        ls.documents.close(uri)
        ls.release_later(ls.checks.forget(uri))
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
        lsp.DiagnosticOptions(identifier=SERVER_NAME, inter_file_dependencies=False, workspace_diagnostics=False),
    )
    async def document_diagnostic(ls: TorchLanguageServer, params: lsp.DocumentDiagnosticParams):
        uri = params.text_document.uri
        complete = True
        try:
            checked = None
            document = ls.documents.get(uri)
            if ls.pulls_in_two_steps and document is not None and not ls.is_checked_or_running(document):
                checked = await ls.first_pass(document)
                if checked is not None and ls.documents.get(uri) is document:
                    ls.refresh_when_complete(document, checked)
                    complete = False
                else:
                    checked = None
            if checked is None:
                checked = await ls.checked_latest(uri)
        except Exception:
            ls.log_failure(f"Checking {uri} failed; answering with its previous diagnostics.")
            checked = ls.checks.latest(uri)
        if complete:
            ls.collect_garbage_when_idle()
        if checked is None:
            return lsp.RelatedFullDocumentDiagnosticReport(items=[])
        # The first step's answer has an id of its own, so that pulling again after the
        # refresh is never answered "unchanged".
        result_id = f"{ls.session_token}:{checked.version}:{checked.generation}" + ("" if complete else ":first")
        if params.previous_result_id == result_id:
            return lsp.RelatedUnchangedDocumentDiagnosticReport(result_id=result_id)
        return lsp.RelatedFullDocumentDiagnosticReport(items=checked.diagnostics, result_id=result_id)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=True),
    )
    async def code_action(ls: TorchLanguageServer, params: lsp.CodeActionParams):
        document = ls.documents.get(params.text_document.uri)
        if document is None:
            return []
        only = params.context.only
        rules = all_rules()
        ours = [d for d in params.context.diagnostics if d.source == DIAGNOSTIC_SOURCE and d.code in rules]
        wants_fixes = wants_kind(only, QUICKFIX) and bool(ours)
        wants_fix_all = wants_kind(only, FIX_ALL) and (bool(only) or ls.resolves_edits)
        if not wants_fixes and not wants_fix_all:
            return []
        try:
            checked = await ls.checked(document)
        except Exception:
            ls.log_failure(f"Checking {document.uri} for code actions failed.")
            return []
        if checked is None or checked.result is None:
            return []
        actions = await quick_fixes(ls, document, checked, ours) if wants_fixes else []
        if wants_fix_all and any(f.fix and f.fix.safety == "safe" for f in checked.result.findings):
            fix_all = await fix_all_code_action(ls, document, checked, lazy=ls.resolves_edits and not only)
            if fix_all is not None:
                actions.append(fix_all)
        return actions

    @server.feature(lsp.CODE_ACTION_RESOLVE)
    async def resolve_code_action(ls: TorchLanguageServer, action: lsp.CodeAction) -> lsp.CodeAction:
        data = action.data if isinstance(action.data, dict) else {}
        document = ls.documents.get(data.get("uri", ""))
        if document is None or document.version != data.get("version") or action.edit is not None:
            return action  # the document moved on: an edit now could land in the wrong place
        try:
            checked = await ls.checked(document)
        except Exception:
            ls.log_failure(f"Resolving {action.title!r} failed.")
            return action
        if checked is None or checked.result is None:
            return action
        if action.kind == FIX_ALL:
            resolved = await fix_all_code_action(ls, document, checked, lazy=False)
            action.edit = resolved.edit if resolved is not None else None
            return action
        span = tuple(data.get("span", (0, 0, 0, 0)))
        loop = asyncio.get_running_loop()
        built = await loop.run_in_executor(ls.analysis_executor, build_fix, checked.result.analysis,
                                           checked.result.findings, data.get("code", ""), span, action.title)
        if built is not None:
            action.edit = to_code_action(built, document, checked.result.analysis.lines, ls.encoding, None,
                                         ls.versioned_edits).edit
        return action

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: TorchLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
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
        line = position.line + 1
        answer = report.hover(line, lines.byte_from_client(position.line, position.character, ls.encoding))
        if answer is None:
            return None
        return lsp.Hover(
            contents=hover_contents(answer.markdown, ls.hover_formats),
            range=ast_range(answer.line, answer.col, answer.end_line, answer.end_col, lines, ls.encoding),
        )

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT, lsp.InlayHintOptions(resolve_provider=False))
    async def inlay_hints(ls: TorchLanguageServer, params: lsp.InlayHintParams) -> list[lsp.InlayHint]:
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
        hints = []
        for hint in report.inlay_hints():
            if first <= hint.line <= last:
                hints.append(lsp.InlayHint(
                    position=lsp.Position(line=hint.line - 1,
                                          character=lines.client_column(hint.line, hint.col, ls.encoding)),
                    label=hint.label, kind=lsp.InlayHintKind.Type,
                    tooltip=hint.tooltip or None,
                ))
        return hints

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(ls: TorchLanguageServer, params: lsp.DidChangeConfigurationParams) -> None:
        # Checks and pulls that arrive while the new settings are fetched wait for them.
        ls.settings_ready.clear()
        try:
            configured = await ls.fetch_editor_settings()
            if configured is None:
                configured = editor_section(params.settings) if params.settings else ls.init_options
            ls.settings.set_editor(configured)
        finally:
            ls.settings_ready.set()
        ls.settings_changed()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched_files(ls: TorchLanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(change.uri.rstrip("/").endswith("/pyproject.toml") for change in params.changes):
            ls.settings.invalidate()
            ls.settings_changed()

    return server


def workspace_folders(params: lsp.InitializeParams) -> list[str]:
    uris = [folder.uri for folder in params.workspace_folders or []]
    if not uris and params.root_uri:
        uris = [params.root_uri]
    paths = [path_from_uri(uri) for uri in uris]
    if not paths and params.root_path:
        paths = [params.root_path]
    return [path for path in paths if path]


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


def serve_stdio() -> None:
    """Serve LSP over stdin/stdout until the client says exit."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="torch-lsp: %(levelname)s %(message)s")
    create_server().start_io()
