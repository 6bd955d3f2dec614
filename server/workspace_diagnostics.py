"""`workspace/diagnostic`: the findings of the workspace's Python files that are not open.

The folders are walked the way the CLI walks them (`torch_lsp.files`: hidden folders,
virtual environments and .gitignore'd paths skipped), up to `MAX_FILES` files.  Each file
is checked on the analysis thread only while no open document waits for a check
(`CheckScheduler.when_idle`), one file at a time, so an open document's check queues
behind one workspace file at most.  Only diagnostics are kept, keyed by the file's size,
modification time and the settings generation: the analysis is dropped as soon as the
file is checked, and a file that did not change since the client's last report is
answered `unchanged` with the same result id.

A report also keeps a digest of the text it checked: when the file is then opened with
that very text, its first pull is answered from the report at once (`known_diagnostics`),
while the open document's own check runs (see `CheckScheduler.pulled`).

A client that gives a `partialResultToken` gets the reports as files are checked, in
`$/progress` notifications (`WorkspaceDiagnosticReportPartialResult`), each batch at
most `PARTIAL_BATCH_S` after its first report, and then an empty final answer, as LSP asks
of a server that streamed its result.
"""
from __future__ import annotations

import asyncio
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from torch_lsp.checker import check_source
from torch_lsp.files import UnreadableFile, python_files, read_python_source
from torch_lsp.protocol import is_too_large, to_diagnostic, too_large_diagnostic
from torch_lsp.shapes import release_shapes

if TYPE_CHECKING:
    from torch_lsp.lsp import TorchLanguageServer

# Files reported at most: a monorepo's hundred thousand files would take minutes to
# check and their diagnostics megabytes to keep.
MAX_FILES = 2_000
# Streamed reports are sent in batches: one notification per file would be thousands.
PARTIAL_BATCH_S = 0.2
PARTIAL_BATCH_ITEMS = 100


@dataclass(frozen=True)
class FileReport:
    """The diagnostics of one file as it was on disk (`stamp`) under one settings generation."""
    stamp: tuple
    result_id: str
    diagnostics: list[lsp.Diagnostic]
    digest: bytes  # of the text checked (`text_digest`): an open of the same text may use the report


class WorkspaceDiagnostics:
    """The reports of the files that are not open, kept as diagnostics only."""

    def __init__(self, server: "TorchLanguageServer") -> None:
        self.server = server
        self.reports: dict[str, FileReport] = {}
        self.told_capped = False

    async def report(self, params: lsp.WorkspaceDiagnosticParams) -> lsp.WorkspaceDiagnosticReport:
        token = params.partial_result_token
        if token is None:
            items: list = []
            await self.report_into(items.append, params)
            return lsp.WorkspaceDiagnosticReport(items=items)
        streamed = PartialResults(self.server, token)
        try:
            await self.report_into(streamed.append, params)
        except BaseException:  # cancelled: nothing more under this token
            streamed.discard()
            raise
        streamed.flush()
        return lsp.WorkspaceDiagnosticReport(items=[])  # all of it went in `$/progress`

    async def report_into(self, add, params: lsp.WorkspaceDiagnosticParams) -> None:
        """`add` each file's report, as it is ready."""
        previous = {item.uri: item.value for item in params.previous_result_ids or ()}
        walked: set[str] = set()
        # Walking a large project takes a while: not on the thread that reads the client's messages.
        files, capped = await asyncio.to_thread(self.files)
        if capped:
            self.tell_capped()
        for path in files:
            uri = path.as_uri()
            walked.add(uri)
            if self.server.documents.get(uri) is not None:
                continue  # open: its own document diagnostics report it, kept current as it is typed
            report = await self.file_report(uri, str(path))
            if report is None:
                continue
            if previous.get(uri) == report.result_id:
                add(lsp.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=report.result_id, version=None))
            else:
                add(lsp.WorkspaceFullDocumentDiagnosticReport(uri=uri, items=report.diagnostics,
                                                              result_id=report.result_id, version=None))
        for gone in set(self.reports) - walked:
            del self.reports[gone]  # deleted or moved out of the folders: its diagnostics go too

    def files(self) -> tuple[list[Path], bool]:
        """The workspace's Python files, in the CLI's order, at most `MAX_FILES`, and whether
        there were more."""
        folders = [Path(folder) for folder in self.server.settings.workspace_folders if os.path.isdir(folder)]
        found: list[Path] = []
        for path in python_files(folders):
            if len(found) == MAX_FILES:
                return found, True
            found.append(path)
        return found, False

    async def file_report(self, uri: str, path: str) -> FileReport | None:
        """The file's report, from the last one while the file and the settings are the same."""
        generation = self.server.settings.generation
        try:
            status = os.stat(path)
        except OSError:
            return None
        stamp = (status.st_size, status.st_mtime_ns, generation, self.server.encoding)
        kept = self.reports.get(uri)
        if kept is not None and kept.stamp == stamp:
            return kept
        checked = await self.server.scheduler.when_idle(self.diagnostics_of, uri, path, generation)
        if checked is None:
            return None
        diagnostics, digest = checked
        report = FileReport(stamp, f"{self.server.session_token}:{status.st_mtime_ns}:{status.st_size}:{generation}",
                            diagnostics, digest)
        self.reports[uri] = report
        return report

    def diagnostics_of(self, uri: str, path: str, generation: int) -> tuple[list[lsp.Diagnostic], bytes] | None:
        """Runs on the analysis thread: the file's diagnostics and the digest of the text they
        are of, its analysis dropped on return; None for a file that cannot be read (the CLI
        says why; the Problems panel has no place for it)."""
        try:
            text = read_python_source(Path(path))
        except UnreadableFile:
            return None
        if is_too_large(text):
            return [too_large_diagnostic(text)], text_digest(text)
        settings, _ = self.server.settings.settings_for(path, generation)
        result = check_source(text, path, settings)
        encoding = self.server.encoding
        diagnostics = [to_diagnostic(finding, result.analysis.lines, encoding, uri) for finding in result.findings]
        release_shapes(result.analysis)  # freed now, not at the next full collection
        return diagnostics, text_digest(text)

    def known_diagnostics(self, uri: str, text: str) -> list[lsp.Diagnostic] | None:
        """The diagnostics of the file at `uri` if its report was made from this very text
        under the current settings and position encoding (what checking it again would
        give, as long as the files it imports are unchanged); else None."""
        report = self.reports.get(uri)
        if report is None:
            return None
        _, _, generation, encoding = report.stamp
        if generation != self.server.settings.generation or encoding != self.server.encoding:
            return None
        return report.diagnostics if report.digest == text_digest(text) else None

    def tell_capped(self) -> None:
        if self.told_capped:
            return
        self.told_capped = True
        self.server.window_log_message(lsp.LogMessageParams(
            type=lsp.MessageType.Info,
            message=f"torch-lsp: workspace diagnostics cover the first {MAX_FILES:,} Python files of the "
                    "workspace; open a file to check it, or run `torch-lsp check` on the folder."))


def text_digest(text: str) -> bytes:
    """A digest of a text, to know it again without keeping it (0.1 ms for 2,000 lines)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class PartialResults:
    """Reports streamed to the client under the request's partial result token, in
    batches: a batch is sent `PARTIAL_BATCH_S` after its first report (while the next
    files are checked), or once it holds `PARTIAL_BATCH_ITEMS`, or by `flush`."""

    def __init__(self, server: "TorchLanguageServer", token: int | str) -> None:
        self.server = server
        self.token = token
        self.batch: list = []
        self.timer: asyncio.TimerHandle | None = None

    def append(self, item) -> None:
        self.batch.append(item)
        if len(self.batch) >= PARTIAL_BATCH_ITEMS:
            self.flush()
        elif self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(PARTIAL_BATCH_S, self.flush)

    def discard(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        self.batch = []

    def flush(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        if self.batch:
            self.server.protocol.notify(lsp.PROGRESS, lsp.ProgressParams(
                token=self.token, value=lsp.WorkspaceDiagnosticReportPartialResult(items=self.batch)))
            self.batch = []
