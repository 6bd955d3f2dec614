"""When the server checks a document version, on which thread, and who hears of it.

One `CheckScheduler` runs every check of the server.  A version of a document goes
through these states (the key of a check is uri, version and settings generation):

    edit/open/save (push client,         pull request (client that supports refresh)
      or any client's notebook)
          |                                    |
          v                                    |
      debouncing --- next edit cancels,        |
          |          restarts the delay        |
          |   (none after an edit when the     |
          |    document's last parse + facts   |
          |    were quicker than the delay;    |
          |    while a check runs, its end     |
          |    instead)                        |
          v                                    v
      first pass  (every rule but the shape rules, on the analysis thread; for a
          |        document just opened with the text the workspace diagnostics
          |        checked in the background, their report instead, every rule's)
          |    \\
          |     `-> push: publish if current     pull: answer, then refresh
          v                                        if the complete list differs
      complete pass  (shape rules added to the same analysis; started by
          |           the first pass's end, or directly on a cache miss;
          |           stopped, leaving no result, once the document has a
          |           newer version: the next check parses its edit from the
          |           stopped version's parse)
          v
      checked  (kept in `versions`; hover, inlay hints and code actions
          |     answer from it, on the request thread; push: published if
          |     current and different)
          |
          |---> light  (a newer version of the document, or other documents
          |             active since, took its place: its analysis is released,
          |             its diagnostics stay; a hover there analyses it again,
          |             on the request thread)
          |
          |---> probed  (only with `probe.enabled`: the version's models run in the
          |              probe worker on a thread of their own; TL502 is added to the
          |              same checked version, then published, or refreshed for a
          |              pull client, if still current)
          v
      released  (pushed out by newer versions, or the document closed:
                 its shape pass is freed on the analysis thread, after
                 whatever was queued there) -> idle: a full garbage
                 collection at most every few seconds, when no check runs
                 (with no document open, the memos emptied first: `memos`)

An edit is parsed in part (`torch_lsp.incremental_parse`): the check of a version reads
the newest analysis kept of the same document, if any, as the text it was edited from.

"Current" means the document still has that version and the settings are still of
that generation: a stale result is never published; the newer check publishes.
Checks are shared: whoever asks for a version that is being checked awaits the same
future (shielded, so a restarted debounce does not cancel what others wait for).
One analysis thread runs the checks, so they queue behind each other instead of
fighting for the GIL, and releasing a version runs after work that still reads it.
Requests about a checked version (hover, inlay hints, code actions) run on a request
thread of their own: they never wait for another document's check.
"""
from __future__ import annotations

import asyncio
import functools
import gc
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Awaitable, Callable

from attrs import evolve

from torch_lsp import memos
from torch_lsp.caller_proofs import proofs_of, proven_in, targets
from torch_lsp.checker import (add_probe_findings, add_shape_findings, check_source, collector_paused,
                               load_rules_and_shape_engine)
from torch_lsp.dependents import imported_modules
from torch_lsp.documents import CheckCache, CheckedVersion, OpenDocument, release_versions
from torch_lsp.incremental_parse import ParsedVersion
from torch_lsp.protocol import is_too_large, to_diagnostic, too_large_diagnostic
from torch_lsp.rule_parts import forget_rule_parts
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.components import forget_parts, keeping_parts
from torch_lsp.shapes.limits import Superseded, stopping_when
from torch_lsp.shapes.probe.session import PROBE_REPORT

if TYPE_CHECKING:
    from torch_lsp.lsp import TorchLanguageServer

CONFIGURATION_TIMEOUT_S = 5.0
GARBAGE_COLLECTION_INTERVAL_S = 2.0
GARBAGE_COLLECTION_RETRY_S = 0.25
# A full collection holds the GIL for 0.1-0.4 s with tens of documents open (no hover is
# answered meanwhile), so it waits while checks wait; during edits that never pause, it
# runs at most this long after it was asked for.
GARBAGE_COLLECTION_LONGEST_WAIT_S = 30.0
# How often background work looks again whether open documents still wait for checks.
BACKGROUND_WAIT_S = 0.05
# The delay after an edit before its check starts, unless the document's last check took less
# (then none: one keystroke's check is over before the next keystroke would have cancelled it).
CHANGE_DEBOUNCE_S = 0.075
# `TORCH_LSP_INCREMENTAL=0` turns off partial parsing and the adaptive delay: the benchmark
# measures the server both ways in one run.
INCREMENTAL = os.environ.get("TORCH_LSP_INCREMENTAL", "1") != "0"


class CheckScheduler:
    """The check pipeline of one server: debounced checks in two passes, published while
    current, kept per version, released when no longer served (see the module docstring)."""

    def __init__(self, server: "TorchLanguageServer") -> None:
        self.server = server  # its documents, settings, client capabilities and notifications
        self.versions = CheckCache()
        self.rechecks: dict[str, int] = {}  # per document: how often a file it imports changed
        # Cleared while editor settings are fetched: checks wait for them.
        self.settings_ready = asyncio.Event()
        # One worker: analyses queue behind each other instead of fighting for the GIL.
        self._analysis_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torch-lsp-analysis")
        self._debouncing: dict[str, asyncio.Task] = {}
        self._first_passes: dict[tuple, asyncio.Future] = {}
        self._complete_passes: dict[tuple, asyncio.Future] = {}
        self._background_tasks: set[asyncio.Task] = set()
        # Per document: how long its last first pass took to parse and build facts, the part of
        # a check that runs to its end even when an edit makes it stale.
        self._unstoppable_seconds: dict[str, float] = {}
        # Per document: the parse of a version whose check was stopped (typed past) in its rules or
        # its shape pass, which no kept version holds: the next check parses its edit from there
        # (in a storm of edits no check finishes, and each would otherwise parse from scratch).
        self._typed_past: dict[str, ParsedVersion] = {}
        # Per document: the version as opened, until its first check is published or pulled: if
        # the workspace diagnostics checked that very text in the background, it is answered from them.
        self._just_opened: dict[str, OpenDocument] = {}
        self._last_collection = 0.0
        self._collection_waits = False  # a collection is asked for, once the interval has passed
        self._collection_asked: float | None = None  # when the collection waiting now was first asked for
        # Requests about checked versions never queue behind checks of other documents.
        self._request_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torch-lsp-requests")
        # Probes wait seconds for a worker: never on the analysis thread.
        self._probe_thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torch-lsp-probe")

    # -- what handlers call ----------------------------------------------------
    def opened(self, document: OpenDocument) -> None:
        """A document was opened: check it (a push client's), remembering the version opened
        until its first check is published, or pulled by a client that pulls in two steps
        (`_known_at_open`)."""
        if self.server.pushes_diagnostics(document.uri) or self.server.pulls_in_two_steps:
            self._just_opened[document.uri] = document
        self.check_soon(document.uri, 0)

    def check_soon(self, uri: str, delay: float, after_running: bool = False) -> None:
        """Check and publish after `delay`, where the document's diagnostics are pushed (a
        pull client asks for the others), and with `after_running`, once the passes running or
        queued now are over."""
        if not self.server.pushes_diagnostics(uri):
            return
        self.cancel(uri)
        self._debouncing[uri] = asyncio.ensure_future(self._debounced(uri, delay, after_running))

    def check_after_edit(self, uri: str) -> None:
        """Check and publish an edited document (push clients only): at once when its last
        parse and facts (the part of a check that a further edit cannot stop: the rules and
        the shape pass of a stale version stop) were quicker than the debounce delay, else
        after the delay, a further edit restarting it; either way, not
        before the checks running now are over, so that the edits made meanwhile are checked
        once, at their newest version."""
        if not INCREMENTAL:
            self.check_soon(uri, CHANGE_DEBOUNCE_S)
            return
        fast = self._unstoppable_seconds.get(uri, float("inf")) <= CHANGE_DEBOUNCE_S
        self.check_soon(uri, 0 if fast else CHANGE_DEBOUNCE_S, after_running=True)

    def cancel(self, uri: str) -> None:
        task = self._debouncing.pop(uri, None)
        if task is not None:
            task.cancel()

    def closed(self, uri: str) -> None:
        """The document was closed: no check of it is published, and its versions are released
        (the errors its calls proved in other open files go with them)."""
        self.cancel(uri)
        self._unstoppable_seconds.pop(uri, None)
        self._typed_past.pop(uri, None)
        self._just_opened.pop(uri, None)
        latest = self.versions.latest(uri)
        self._release_later(self.versions.forget(uri))
        try:
            self._analysis_thread.submit(_forget_kept_parts, uri)  # the parts kept for its next version
        except RuntimeError:
            pass  # shutting down: the process frees everything
        if latest is not None and latest.proofs:
            self._proofs_changed(targets(latest.proofs))
        self._collect_garbage_when_idle()

    def forget_checks(self, uri: str) -> None:
        """The document's checks are stale (a file it imports changed): the next request
        checks it again, and its diagnostics get a new result id."""
        self.rechecks[uri] = self.rechecks.get(uri, 0) + 1
        self._release_later(self.versions.forget(uri))

    def diagnostics_of(self, document: OpenDocument, checked: CheckedVersion) -> list:
        """What the client is given for a checked version: its diagnostics and the errors that
        calls in the other open documents prove in it (`caller_proofs`)."""
        return checked.diagnostics + self.proven_by_callers(document, checked)

    def proven_by_callers(self, document: OpenDocument, checked: CheckedVersion) -> list:
        if document.path is None:
            return []
        callers = (latest.proofs for uri, latest in self.versions.latest_of_each()
                   if uri != document.uri and latest.proofs and self.server.documents.get(uri) is not None)
        return proven_in(document.path, document.text, checked.diagnostics, callers)

    async def checked(self, document: OpenDocument, first_pass: CheckedVersion | None = None) -> CheckedVersion | None:
        """The check of this document version under the current settings: from the
        cache, from a check already running, or a new one on the analysis thread
        (completing `first_pass`, a check without the shape rules, when given).
        None when the document changed before its check started.  The version may be
        `light` (diagnostics only); `analysed` gives one with its analysis."""
        await self._settings_settled()
        generation = self.server.settings.generation
        cached = self.versions.get(document.uri, document.version, generation)
        if cached is not None:
            return cached
        # Shielded: a cancelled waiter (a restarted debounce) must not cancel the check others share.
        return await asyncio.shield(self._start_complete_pass(document, generation, first_pass))

    async def analysed(self, document: OpenDocument) -> CheckedVersion | None:
        """Like `checked`, for a request that reads the version's analysis (hover, inlay
        hints, code actions): a version kept light is analysed again, on the request
        thread, so that it never waits behind other documents' checks."""
        checked = await self.checked(document)
        if checked is None or not checked.light:
            if checked is not None:
                self._release_later(self.versions.touch(document.uri))
            return checked
        return await asyncio.shield(self._start_complete_pass(document, checked.generation,
                                                              thread=self._request_thread))

    async def checked_latest(self, uri: str) -> CheckedVersion | None:
        """The check of the document's newest version, following edits made meanwhile."""
        checked = None
        for _ in range(5):
            document = self.server.documents.get(uri)
            if document is None:
                return checked
            fresh = await self.checked(document)
            if fresh is not None:
                checked = fresh
                if self.server.documents.get(uri) is document:
                    return fresh
        return checked

    async def pulled(self, uri: str) -> tuple[CheckedVersion | None, bool]:
        """What a pull of the document's diagnostics is answered with, and whether it is
        complete: for a client that pulls again when asked, the first pass of a version not
        yet checked (the refresh follows once the complete pass differs), or for a document
        just opened with the text the workspace diagnostics checked in the background, their
        report of it; else the complete check of the newest version.  A failed check answers
        with the last version kept."""
        complete = True
        try:
            checked = None
            document = self.server.documents.get(uri)
            if self.server.pulls_in_two_steps and document is not None and not self._checked_or_running(document):
                checked = await self._known_at_open(document) or await self._first_pass(document)
                if checked is not None and self.server.documents.get(uri) is document:
                    self._refresh_when_complete(document, checked)
                    complete = False
                else:
                    checked = None
            if checked is None:
                checked = await self.checked_latest(uri)
        except Exception:
            self.server.log_failure(f"Checking {uri} failed; answering with its previous diagnostics.")
            checked = self.versions.latest(uri)
        if complete:
            self._collect_garbage_when_idle()
        return checked, complete

    async def _known_at_open(self, document: OpenDocument) -> CheckedVersion | None:
        """The diagnostics of a document as opened, unedited, from the workspace diagnostics'
        report of the same text under the same settings (a light version, not kept: the
        document's own check follows, and a refresh if its findings differ: a file it imports
        may be open with unsaved edits)."""
        if self._just_opened.pop(document.uri, None) is not document:
            return None
        await self._settings_settled()
        known = self.server.workspace_reports.known_diagnostics(document.uri, document.text)
        if known is None or self.server.documents.get(document.uri) is not document:
            return None
        return CheckedVersion(document.version, self.server.settings.generation, None, list(known), light=True)

    async def on_analysis_thread(self, work: Callable, *args):
        """The result of `work(*args)`, run on the analysis thread after the checks queued there."""
        return await asyncio.get_running_loop().run_in_executor(self._analysis_thread, work, *args)

    async def on_request_thread(self, work: Callable, *args):
        """The result of `work(*args)`, run on the thread that answers requests about checked
        versions (hover, inlay hints, code actions): never behind another document's check."""
        return await asyncio.get_running_loop().run_in_executor(self._request_thread, work, *args)

    def warm_up(self) -> None:
        """Load the rules and the shape engine on the analysis thread: `initialize` is answered
        without them, and the first check queues behind this instead of importing them itself.
        What the server would otherwise build on first use, in the middle of the documents'
        analyses (the message converters, `malloc_trim`), is built here too: built later, its
        few long-lived objects would be scattered among the analyses' memory and keep it
        resident once they are freed (see `memos`)."""
        self._analysis_thread.submit(load_rules_and_shape_engine)
        self._analysis_thread.submit(self.server.protocol.build_converters)
        self._analysis_thread.submit(_malloc_trim)

    async def when_idle(self, work: Callable, *args):
        """The result of `work(*args)` on the analysis thread, started only once no open
        document waits for a check (debouncing, or a pass queued or running): background
        work such as workspace diagnostics yields to what the user is typing, and an open
        document's check waits behind one such piece of work at most."""
        while self._debouncing or self._first_passes or self._complete_passes:
            await asyncio.sleep(BACKGROUND_WAIT_S)
        return await self.on_analysis_thread(work, *args)

    def shutdown(self) -> None:
        for thread in (self._analysis_thread, self._request_thread, self._probe_thread):
            thread.shutdown(wait=False, cancel_futures=True)

    # -- debouncing -> first pass -> complete pass -> published ------------------
    async def _debounced(self, uri: str, delay: float, after_running: bool = False) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            running = [*self._first_passes.values(), *self._complete_passes.values()]
            if after_running and running:
                # Not cancelled with this task: others await them.  A further edit meanwhile
                # cancels this wait, so the edits of a busy spell are checked once.
                await asyncio.wait(running)
            await self._check_and_publish(uri)
        finally:
            if self._debouncing.get(uri) is asyncio.current_task():
                del self._debouncing[uri]

    async def _check_and_publish(self, uri: str) -> None:
        """Push diagnostics in two steps: every rule but the shape rules first (most of the
        findings, sooner), then all of them once the shape pass has run on the same analysis;
        for a document just opened with a text the workspace diagnostics checked, their report
        first, then the document's own check if it differs."""
        document = self.server.documents.get(uri)
        if document is None:
            return
        try:
            first_pass = published = None
            if not self._checked_or_running(document):
                first_pass = await self._known_at_open(document) or await self._first_pass(document)
                if first_pass is not None:
                    published = self._publish_if_current(document, first_pass)
            checked = await self.checked(document, first_pass)
        except asyncio.CancelledError:
            raise
        except Exception:
            self.server.log_failure(f"Checking {uri} failed; its previous diagnostics stay.")
            return
        if checked is not None and (published is None or self.diagnostics_of(document, checked) != published):
            self._publish_if_current(document, checked)
        self._collect_garbage_when_idle()

    async def _first_pass(self, document: OpenDocument) -> CheckedVersion | None:
        """This version checked by every rule but the shape rules (most of the findings,
        sooner), shared by whoever asks meanwhile.  Its complete pass starts on the same
        analysis as soon as it is done."""
        await self._settings_settled()
        generation = self.server.settings.generation
        key = (document.uri, document.version, generation)
        running = self._first_passes.get(key)
        if running is None:
            running = asyncio.get_running_loop().run_in_executor(
                self._analysis_thread, partial(self._check, document, generation, None, False))
            self._first_passes[key] = running
            running.add_done_callback(lambda future: self._first_pass_done(key, document, generation, future))
        return await asyncio.shield(running)

    def _first_pass_done(self, key, document: OpenDocument, generation: int, future: asyncio.Future) -> None:
        # Runs before anyone awaiting the first pass resumes: from then on the complete
        # pass is running, so nobody starts a second one.
        self._first_passes.pop(key, None)
        if future.cancelled() or future.exception() is not None or future.result() is None:
            return
        if not self._superseded(document):
            self._start_complete_pass(document, generation, future.result())

    def _start_complete_pass(self, document: OpenDocument, generation: int,
                             first_pass: CheckedVersion | None = None, thread=None) -> asyncio.Future:
        """The complete check of this version that is running, started here (on `thread`,
        by default the analysis thread) if none is."""
        key = (document.uri, document.version, generation)
        running = self._complete_passes.get(key)
        if running is None:
            running = asyncio.get_running_loop().run_in_executor(
                thread or self._analysis_thread, self._check, document, generation, first_pass)
            self._complete_passes[key] = running
            running.add_done_callback(lambda future: self._complete_pass_done(key, future))
        return running

    def _complete_pass_done(self, key, future: asyncio.Future) -> None:
        self._complete_passes.pop(key, None)
        if future.cancelled() or future.exception() is not None or future.result() is None:
            return
        checked = future.result()
        if self.server.documents.get(key[0]) is None:
            # Closed while it was checked: caching it would keep it for as long as the server runs.
            self._release_later([checked])
            return
        previous = self.versions.latest(key[0])
        self._release_later(self.versions.put(key[0], checked))
        before = previous.proofs if previous is not None else ()
        if checked.proofs != before:
            self._proofs_changed(targets(before) | targets(checked.proofs))
        self.server.show_settings_problems(checked.settings_problems)
        document = self.server.documents.get(key[0])
        if document is not None and document.version == checked.version and checked.result is not None:
            settings, _ = self.server.settings.settings_for(document.path, checked.generation)
            if settings.probe_enabled:
                self._in_background(self._probe_pass(document, checked, settings))

    # -- checked -> probed ---------------------------------------------------------
    def probe_again(self, document: OpenDocument, checked: CheckedVersion) -> None:
        """Probe a checked version once more (the user gave a class an input shape)."""
        settings, _ = self.server.settings.settings_for(document.path, checked.generation)
        if settings.probe_enabled and checked.result is not None and self._is_current(document, checked):
            checked.result.analysis.facts.pop(PROBE_REPORT)
            self._in_background(self._probe_pass(document, checked, settings))

    async def _probe_pass(self, document: OpenDocument, checked: CheckedVersion, settings) -> None:
        """Run the version's models in the probe and add TL502 to the checked version."""
        probes = self.server.probes
        analysis = checked.result.analysis
        try:
            targets = await self.on_analysis_thread(lambda: probes.plan(analysis, infer_shapes(analysis)))
            if not targets or not self._is_current(document, checked):
                return
            async with self.server.progress("torch-lsp: starting the shape probe (importing torch)",
                                            not probes.has_worker(settings.probe)):
                answers = await asyncio.get_running_loop().run_in_executor(
                    self._probe_thread, probes.ask, targets, settings.probe, self.server.probe_folders(document))
            if not self._is_current(document, checked):
                return
            result, diagnostics = await self.on_analysis_thread(self._with_probe, checked, targets, answers, settings)
        except Exception:
            self.server.log_failure(f"Probing {document.uri} failed; the other diagnostics stay.")
            return
        self.server.show_probe_notes(result.analysis)
        if not self._is_current(document, checked):
            return
        if self.server.client_supports("workspace.code_lens.refresh_support"):
            self.server.workspace_code_lens_refresh(None)  # "Probe: [B, 784] → [B, 10]"
        changed = diagnostics != checked.diagnostics
        checked = replace(checked, result=result, diagnostics=diagnostics)
        self._release_later(self.versions.put(document.uri, checked))
        if changed:
            if self.server.pushes_diagnostics(document.uri):
                self._publish_if_current(document, checked)
            elif self.server.client_supports("workspace.diagnostics.refresh_support"):
                self.server.workspace_diagnostic_refresh(None)

    def _with_probe(self, checked: CheckedVersion, targets, answers, settings):
        """Runs on the analysis thread: the version's result and diagnostics with TL502."""
        analysis = checked.result.analysis
        self.server.probes.fold(analysis, targets, answers)
        result = add_probe_findings(checked.result, settings)
        encoding = self.server.encoding
        return result, [to_diagnostic(finding, analysis.lines, encoding) for finding in result.findings]

    def _is_current(self, document: OpenDocument, checked: CheckedVersion) -> bool:
        current = self.server.documents.get(document.uri)
        return (current is document and current.version == checked.version
                and checked.generation == self.server.settings.generation)

    def _check(self, document: OpenDocument, generation: int, first_pass: CheckedVersion | None = None,
               shapes: bool = True) -> CheckedVersion | None:
        """Runs on the analysis thread.  `shapes=False` leaves out the rules that need the
        shape pass; `first_pass` is such a check of this version, completed here."""
        if self._superseded(document):
            return None  # edited or closed while this check waited for the thread
        if is_too_large(document.text):
            return CheckedVersion(document.version, generation, None, [too_large_diagnostic(document.text)])
        settings, problems = self.server.settings.settings_for(document.path, generation)
        # The shape pass of a version the user has typed past stops (no result): the newest
        # version's check, queued behind it on this thread, starts that much sooner.
        superseded = partial(self._superseded, document)
        closed = partial(self._closed, document)
        with collector_paused(), stopping_when(superseded, closed), keeping_parts(document.uri):
            completes = first_pass is not None and first_pass.result is not None and first_pass.generation == generation
            try:
                if completes:
                    result = add_shape_findings(first_pass.result, settings)
                else:
                    edited_from = self._edited_from(document.uri)
                    result = check_source(document.text, document.path, settings, shapes=shapes,
                                          previous=edited_from)
            except Superseded as stopped:
                parsed = first_pass.result.analysis.parsed if completes else stopped.parsed
                if parsed is not None:
                    self._remember(self._typed_past, document.uri, parsed)
                self._forget_parts_if_closed(document.uri)
                return None
            lines = result.analysis.lines
            encoding = self.server.encoding
            diagnostics = [to_diagnostic(finding, lines, encoding, document.uri) for finding in result.findings]
            proofs = self._proofs(document, result.findings, lines, encoding)
            # The check's objects would otherwise be walked by the collector's young-generation
            # passes as soon as it resumes (about 13 ms for 2,000 lines, before this version is
            # published).  Frozen, they are left to the periodic full collection, which
            # unfreezes first; what a version holds is freed by reference counting anyway.
            gc.freeze()
        self._forget_parts_if_closed(document.uri)
        if completes:
            imports = first_pass.imported_modules
        else:
            imports = imported_modules(result.analysis.statements)
            # What the debounce weighs: the next edit is parsed in part, as this one was; after a
            # parse from scratch (the open) that cost is not known yet, and the parse of the whole
            # file, several times more, says nothing of it: the next edit is checked at once.
            unstoppable = result.analysed_in if edited_from is not None else 0.0
            self._remember(self._unstoppable_seconds, document.uri, unstoppable)
        return CheckedVersion(document.version, generation, result, diagnostics, problems,
                              imported_modules=imports, proofs=proofs)

    def _remember(self, per_document: dict, uri: str, value) -> None:
        """Keep `value` for the document at `uri` (on the analysis thread), unless it is
        closed: a check stopped by the close would otherwise keep its parse for as long as
        the server runs (each of 21 documents opened and closed at once left its whole tree
        and facts, 258 MB).  The close handler removes the document, then what is kept for
        it; checking again after storing leaves nothing whichever runs first."""
        per_document[uri] = value
        if self.server.documents.get(uri) is None:
            per_document.pop(uri, None)

    def _forget_parts_if_closed(self, uri: str) -> None:
        """The shape pass keeps a document's parts for its next version: a check that ends after
        its document was closed forgets them (`closed` may have forgotten them before it stored)."""
        if self.server.documents.get(uri) is None:
            _forget_kept_parts(uri)

    def _superseded(self, document: OpenDocument) -> bool:
        """Whether `document` (this version) is no longer the open document of its uri: its
        check is published to no one.  Also read on the analysis thread: a dict lookup, safe
        against the event loop's edits under the GIL."""
        return self.server.documents.get(document.uri) is not document

    def _closed(self, document: OpenDocument) -> bool:
        """Whether `document`'s uri is no longer open (read on the analysis thread, as `_superseded`)."""
        return self.server.documents.get(document.uri) is None

    def _edited_from(self, uri: str) -> ParsedVersion | None:
        """The newest parse of the document at hand (a version whose check was typed past,
        else the newest version that still holds its analysis): the text the version
        being checked was most likely edited from (any text will do: it is only compared).
        Read on the analysis thread, which alone releases analyses."""
        typed_past = self._typed_past.pop(uri, None)
        if not INCREMENTAL:
            return None
        if typed_past is not None:
            return typed_past
        latest = self.versions.latest(uri)
        if latest is None or latest.result is None:
            return None
        return latest.result.analysis.parsed

    def _proofs(self, document: OpenDocument, findings, lines, encoding: str) -> tuple:
        """The errors the findings' calls prove in other files (a notebook's calls as places in
        their cells)."""
        proofs = proofs_of(findings, document.uri, lines, encoding)
        notebook = self.server.notebooks.get(document.uri)
        if notebook is None or not proofs:
            return proofs
        from torch_lsp.notebook_sync import related_in_cell

        return tuple(replace(proof, diagnostic=evolve(proof.diagnostic, related_information=[
            related_in_cell(notebook, info) for info in proof.diagnostic.related_information or ()]))
            for proof in proofs)

    def _proofs_changed(self, paths: set[str]) -> None:
        """The errors proven by calls in the files at `paths` changed: those open get their
        diagnostics again (pushed, or a refresh for a client that pulls)."""
        affected = [d for d in self.server.documents.all() if d.path is not None and os.path.abspath(d.path) in paths]
        if not affected:
            return
        generation = self.server.settings.generation
        if any(not self.server.pushes_diagnostics(d.uri) for d in affected) \
                and self.server.client_supports("workspace.diagnostics.refresh_support"):
            self.server.workspace_diagnostic_refresh(None)
        for document in (d for d in affected if self.server.pushes_diagnostics(d.uri)):
            checked = self.versions.get(document.uri, document.version, generation)
            if checked is not None:  # else its own check, still to come, publishes them
                self._publish_if_current(document, checked)

    def _publish_if_current(self, document: OpenDocument, checked: CheckedVersion) -> list | None:
        """Publish the version's diagnostics (with those proven by callers) if it is current;
        what was published, or None."""
        current = self.server.documents.get(document.uri)
        if current is None or current.version != document.version:
            return None  # the text moved on; the check of the newer version publishes
        if checked.generation != self.server.settings.generation:
            return None  # settings changed meanwhile; a new check is already scheduled
        diagnostics = self.diagnostics_of(current, checked)
        self.server.publish_diagnostics(document.uri, diagnostics, document.version)
        return diagnostics

    def _refresh_when_complete(self, document: OpenDocument, first_pass: CheckedVersion) -> None:
        """After a pull was answered with `first_pass`: once the complete pass of that version
        is done, ask the client to pull again if the shape rules changed the list."""
        async def refresh() -> None:
            try:
                checked = await self.checked(document, first_pass)
            except Exception:
                self.server.log_failure(f"Checking {document.uri} failed; its first diagnostics stay.")
                return
            if (checked is not None and checked.diagnostics != first_pass.diagnostics
                    and self.server.documents.get(document.uri) is document
                    and checked.generation == self.server.settings.generation):
                self.server.workspace_diagnostic_refresh(None)
            self._collect_garbage_when_idle()

        self._in_background(refresh())

    def _in_background(self, work: Awaitable[None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background_tasks.add(task)  # the loop keeps only a weak reference to a task
        task.add_done_callback(self._background_tasks.discard)

    def _checked_or_running(self, document: OpenDocument) -> bool:
        key = (document.uri, document.version, self.server.settings.generation)
        return self.versions.get(*key) is not None or key in self._complete_passes

    async def _settings_settled(self) -> None:
        try:
            await asyncio.wait_for(self.settings_ready.wait(), CONFIGURATION_TIMEOUT_S)
        except asyncio.TimeoutError:
            self.settings_ready.set()  # the client never answered: go on with what we have

    # -- released -> idle --------------------------------------------------------
    def _release_later(self, versions: list[CheckedVersion]) -> None:
        """Free versions no longer served, on the analysis thread after queued work."""
        if not versions:
            return
        try:
            self._analysis_thread.submit(release_versions, versions)
        except RuntimeError:
            pass  # shutting down: the process frees everything

    def _collect_garbage_when_idle(self) -> None:
        """A full collection for what reference counting does not free: the few small cycles
        a dropped version leaves, and every check's objects, which `_check` freezes.  Runs on
        the analysis thread, at most every few seconds, and only when no check is waiting
        (debouncing, queued or running; during a storm of edits that never pauses, at most
        `GARBAGE_COLLECTION_LONGEST_WAIT_S` late); asked for meanwhile, it runs once those allow."""
        if self._collection_waits:
            return
        loop = asyncio.get_running_loop()
        now = time.monotonic()
        if self._collection_asked is None:
            self._collection_asked = now
        wait = self._last_collection + GARBAGE_COLLECTION_INTERVAL_S - now
        checks_wait = bool(self._debouncing or self._first_passes or self._complete_passes)
        if wait > 0 or (checks_wait and now - self._collection_asked < GARBAGE_COLLECTION_LONGEST_WAIT_S):
            self._collection_waits = True
            loop.call_later(max(wait, GARBAGE_COLLECTION_RETRY_S), self._collect_garbage_after_waiting)
            return
        self._last_collection = now
        self._collection_asked = None
        work = self._forget_and_collect if not self.server.documents.all() else collect_everything
        try:
            loop.run_in_executor(self._analysis_thread, work)
        except RuntimeError:
            pass  # shutting down

    def _collect_garbage_after_waiting(self) -> None:
        self._collection_waits = False
        self._collect_garbage_when_idle()

    def _forget_and_collect(self) -> None:
        """The idle collection when no document is open (on the analysis thread): what the
        checks left in caches goes first, the analyses of imported files and the memos
        (`memos`); kept, they would hold the memory of the closed documents' analyses, a
        few objects in each arena, from the system."""
        resolver = getattr(self.server, "workspace_resolver", None)
        if resolver is not None:
            resolver.forget()
        collect_everything(forget_memos=True)


def collect_everything(forget_memos: bool = False) -> None:
    """A full collection, including what checks froze (see `CheckScheduler._check`), then
    the freed memory handed back to the system; with `forget_memos`, the module-level
    memos emptied first."""
    if forget_memos:
        memos.forget_all()
    gc.unfreeze()
    gc.collect()
    give_back_freed_memory()


def give_back_freed_memory() -> None:
    """glibc's allocator keeps what Python frees for later reuse, so the server's RSS would
    stay at its peak after documents are closed; `malloc_trim` returns the free pages.
    Elsewhere (macOS, musl, Windows) nothing is done."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


def _forget_kept_parts(uri: str) -> None:
    """What the shape pass and the rules keep of a document for its next version (its parts) goes."""
    forget_parts(uri)
    forget_rule_parts(uri)
