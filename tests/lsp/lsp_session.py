"""Driving the real `torch-lsp serve` process over stdio with pytest-lsp.

`Session` wraps a pytest-lsp `LanguageClient` with what the end-to-end tests
repeat: opening and editing documents, reading diagnostics the way the client's
profile gets them (pushed with a version, or pulled), and applying the edits of a
code action with LSP line splitting (written here independently of the server's
own `torch_lsp.text`, so a shared bug cannot hide).
"""
from __future__ import annotations

import asyncio
import os
import re
import sys
from collections import defaultdict
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features
from pytest_lsp.client import progress as pytest_lsp_progress

SERVER_COMMAND = [sys.executable, "-m", "torch_lsp", "serve"]
VSCODE = "visual-studio-code"
NEOVIM = "neovim"
PROFILES = [VSCODE, NEOVIM]
WAIT_S = 60.0  # a safety net against hangs, never a performance assertion

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


# ------------------------------------------------------------------ client
def _record_publish(client: LanguageClient, params: lsp.PublishDiagnosticsParams) -> None:
    client.diagnostics[params.uri] = params.diagnostics
    client.published[params.uri].append(params)


def _record_registration(client: LanguageClient, params: lsp.RegistrationParams) -> None:
    client.registrations.extend(params.registrations)


def _record_inlay_hint_refresh(client: LanguageClient, params: None) -> None:
    client.inlay_hint_refreshes += 1


def _record_code_lens_refresh(client: LanguageClient, params: None) -> None:
    client.code_lens_refreshes += 1


def _record_progress(client: LanguageClient, params: lsp.ProgressParams) -> None:
    """Work-done progress as pytest-lsp records it; partial results (a value with no
    `kind`) kept raw under their token."""
    if isinstance(params.value, dict) and "kind" not in params.value:
        client.partial_results[params.token].append(params.value)
    else:
        pytest_lsp_progress(client, params)


def _pick_first_action(client: LanguageClient, params: lsp.ShowMessageRequestParams) -> lsp.MessageActionItem | None:
    """A user who takes the first choice the server offers."""
    client.message_requests.append(params)
    return params.actions[0] if params.actions else None


def make_client() -> LanguageClient:
    """pytest-lsp's test client, also keeping every publish (with its version), every
    dynamic registration the server asks for and every partial result, and answering
    inlay-hint refreshes (the Neovim profile declares support for them, as Neovim does)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = defaultdict(list)
    client.registrations = []
    client.inlay_hint_refreshes = 0
    client.code_lens_refreshes = 0
    client.message_requests = []
    client.partial_results = defaultdict(list)
    features = dict(DEFAULT_CLIENT_FEATURES)
    features[lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = _record_publish
    features[lsp.CLIENT_REGISTER_CAPABILITY] = _record_registration
    features[lsp.WORKSPACE_INLAY_HINT_REFRESH] = _record_inlay_hint_refresh
    features[lsp.WORKSPACE_CODE_LENS_REFRESH] = _record_code_lens_refresh
    features[lsp.WINDOW_SHOW_MESSAGE_REQUEST] = _pick_first_action
    features[lsp.PROGRESS] = _record_progress
    register_lsp_features(client, features)
    return client


def server_config(env: dict[str, str] | None = None) -> ClientServerConfig:
    return ClientServerConfig(
        server_command=SERVER_COMMAND,
        client_factory=make_client,
        server_env={**os.environ, **env} if env else None,
    )


def capabilities(profile: str, pull_refresh: bool = False, configuration: bool = True,
                 notebooks: bool | None = None) -> lsp.ClientCapabilities:
    """A client profile, optionally a pull client that supports refresh, or one
    without `workspace/configuration`.  Notebook sync is declared as the real client
    does (VS Code since 1.74, Neovim never), or as `notebooks` says."""
    caps = client_capabilities(profile)
    if notebooks if notebooks is not None else profile == VSCODE:
        caps.notebook_document = lsp.NotebookDocumentClientCapabilities(
            synchronization=lsp.NotebookDocumentSyncClientCapabilities(dynamic_registration=True,
                                                                       execution_summary_support=True))
    if pull_refresh:
        caps.workspace.diagnostics = lsp.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    if not configuration:
        caps.workspace.configuration = False
    return caps


# ------------------------------------------------------------------ session
class Document:
    def __init__(self, uri: str, text: str, version: int = 1):
        self.uri = uri
        self.text = text
        self.version = version


class Session:
    def __init__(self, client: LanguageClient, profile: str, root: Path, result: lsp.InitializeResult):
        self.client = client
        self.profile = profile
        self.root = root
        self.capabilities = result.capabilities
        encoding = result.capabilities.position_encoding or lsp.PositionEncodingKind.Utf16
        self.encoding = getattr(encoding, "value", encoding)
        self.pulls = client.capabilities.text_document.diagnostic is not None

    # -- documents
    def open(self, name: str, text: str) -> Document:
        """Open a file of the workspace folder (it need not exist on disk)."""
        return self.open_path(self.root / name, text)

    def open_path(self, path: Path, text: str) -> Document:
        document = Document(path.as_uri(), text)
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=document.uri, language_id="python", version=1, text=text)
            )
        )
        return document

    def change(self, document: Document, text: str) -> None:
        document.version += 1
        document.text = text
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=document.uri, version=document.version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    def edit(self, document: Document, range_: lsp.Range, new_text: str) -> None:
        """Send a ranged change, as a client that ignores whole-document sync would."""
        document.version += 1
        document.text = apply_edits(document.text, [lsp.TextEdit(range=range_, new_text=new_text)], self.encoding)
        self.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=document.uri, version=document.version),
                content_changes=[lsp.TextDocumentContentChangePartial(range=range_, text=new_text)],
            )
        )

    def close(self, document: Document) -> None:
        self.client.text_document_did_close(
            lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=document.uri))
        )

    # -- settings
    def configuration_changed(self, settings: Any = None) -> None:
        self.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=settings))

    def file_changed(self, path: Path) -> None:
        self.client.workspace_did_change_watched_files(
            lsp.DidChangeWatchedFilesParams(changes=[lsp.FileEvent(uri=path.as_uri(), type=lsp.FileChangeType.Changed)])
        )

    # -- diagnostics
    def publish_count(self, document: Document) -> int:
        return len(self.client.published[document.uri])

    async def pull(self, document: Document, previous_result_id: str | None = None):
        return await self.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(
                text_document=lsp.TextDocumentIdentifier(uri=document.uri),
                previous_result_id=previous_result_id,
            )
        )

    async def pushed(self, document: Document, after: int = 0) -> lsp.PublishDiagnosticsParams:
        """The first publish for the document's current version among those after the
        first `after` publishes."""

        def found():
            for params in self.client.published[document.uri][after:]:
                if params.version == document.version:
                    return params
            return None

        await wait_until(lambda: found() is not None, f"diagnostics for version {document.version} of {document.uri}")
        return found()

    async def diagnostics(self, document: Document, after: int = 0) -> list[lsp.Diagnostic]:
        """Diagnostics of the document's current version, the way this client gets them:
        pulled, or the first push for that version among those after the first `after`
        (a settings change publishes the same version again)."""
        if self.pulls:
            report = await self.pull(document)
            assert report.kind == "full"
            return list(report.items)
        return list((await self.pushed(document, after)).diagnostics)

    # -- code actions
    async def code_actions(self, document: Document, range_: lsp.Range, diagnostics, only=None):
        return await self.client.text_document_code_action_async(
            lsp.CodeActionParams(
                text_document=lsp.TextDocumentIdentifier(uri=document.uri),
                range=range_,
                context=lsp.CodeActionContext(diagnostics=list(diagnostics), only=only),
            )
        )

    def applied(self, document: Document, action: lsp.CodeAction) -> str:
        """The document text after the action's workspace edit."""
        edit = action.edit
        if edit.document_changes:
            (change,) = edit.document_changes
            assert change.text_document.uri == document.uri
            assert change.text_document.version == document.version
            edits = change.edits
        else:
            edits = edit.changes[document.uri]
        return apply_edits(document.text, edits, self.encoding)


async def wait_until(predicate, what: str) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_S
    while not predicate():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


async def open_session(
    client: LanguageClient,
    profile: str,
    root: Path,
    initialization_options: Any = None,
    pull_refresh: bool = False,
    configuration: dict | None = None,
    configuration_support: bool = True,
    notebooks: bool | None = None,
) -> Session:
    if configuration is not None:
        client.set_configuration(configuration)
    result = await client.initialize_session(
        lsp.InitializeParams(
            capabilities=capabilities(profile, pull_refresh, configuration_support, notebooks),
            root_uri=root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=initialization_options,
        )
    )
    return Session(client, profile, root, result)


@asynccontextmanager
async def session(profile: str, root: Path, env: dict[str, str] | None = None, **options):
    """A fresh server process for tests that need their own start-up settings."""
    client = await server_config(env).start()
    try:
        yield await open_session(client, profile, root, **options)
        await asyncio.wait_for(client.shutdown_session(), WAIT_S)
    finally:
        # `stop()` waits for the server to exit: after a failed test it may never do so.
        server = client._server
        if server is not None and server.returncode is None:
            server.kill()
        await client.stop()


# ------------------------------------------------------------------ positions
def column_units(text: str, encoding: str) -> int:
    """Length of `text` in a client column unit."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def lsp_lines(text: str) -> list[str]:
    return _LINE_BREAK.split(text)


def _offset(text: str, position: lsp.Position, encoding: str) -> int:
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    lines = lsp_lines(text)
    line = min(position.line, len(lines) - 1)
    units = 0
    for index, char in enumerate(lines[line]):
        if units >= position.character:
            return starts[line] + index
        units += column_units(char, encoding)
    return starts[line] + len(lines[line])


def apply_edits(text: str, edits, encoding: str) -> str:
    spans = sorted(
        ((_offset(text, e.range.start, encoding), _offset(text, e.range.end, encoding), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def position_of(text: str, needle: str, encoding: str, occurrence: int = 0) -> lsp.Position:
    """LSP position of the start of `needle` (its `occurrence`-th match) in `text`."""
    offset = -1
    for _ in range(occurrence + 1):
        offset = text.index(needle, offset + 1)
    starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
    line = max(i for i, start in enumerate(starts) if start <= offset)
    return lsp.Position(line=line, character=column_units(text[starts[line]:offset], encoding))


def span_of(text: str, needle: str, encoding: str, occurrence: int = 0) -> lsp.Range:
    start = position_of(text, needle, encoding, occurrence)
    lines = lsp_lines(text)
    line_text = lines[start.line]
    # `needle` lies on one line in these tests
    prefix_chars = next(
        i for i in range(len(line_text) + 1) if column_units(line_text[:i], encoding) == start.character
    )
    end = column_units(line_text[: prefix_chars + len(needle)], encoding)
    return lsp.Range(start=start, end=lsp.Position(line=start.line, character=end))
