"""Probing a file: plan the requests, ask the worker, fold the answers into a `ProbeReport`.

One `ProbeSession` per front end (the server keeps one for its life, the CLI one per run):
it keeps a worker per interpreter and device, and remembers answers by request (the
file's source, the constructor, the input shapes) and torch version, so an unchanged file
is never probed twice.  The report is attached to the analysed version as a fact
(`PROBE_REPORT`), where TL502 and the hover read it.
"""
from __future__ import annotations

import hashlib
import json
import threading
from typing import TYPE_CHECKING

from torch_lsp.fact_cache import FactKey
from torch_lsp.shapes.probe.client import ProbeClient, ProbeOptions, probe_python
from torch_lsp.shapes.probe.given_inputs import GivenInputs
from torch_lsp.shapes.probe.plan import ProbeTarget, probe_targets
from torch_lsp.shapes.probe.results import ProbeReport, add_answer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.report import ShapeReport

PROBE_REPORT: FactKey[ProbeReport] = FactKey("shape probe report")
CPU_FALLBACK_FRACTION = 4  # rerun on the CPU only models under a quarter of the memory limit
MAX_CACHED_ANSWERS = 256


class FixedInputs:
    """Input shapes given once for every file (`--probe-input Net=[B, 784]` on the CLI)."""

    def __init__(self, by_class: dict[str, list[dict]]):
        self.by_class = by_class

    def for_file(self, path: str | None) -> dict[str, list[dict]]:
        return self.by_class


def probe_report_of(analysis: "Analysis") -> ProbeReport | None:
    """The probe's report for this version, when a front end probed it."""
    return analysis.facts.peek(PROBE_REPORT)


class ProbeSession:
    def __init__(self, workspace: str | None = None, editor_python: str | None = None,
                 given: "GivenInputs | FixedInputs | None" = None):
        self.workspace = workspace
        self.editor_python = editor_python
        # Input shapes the user gave per class: remembered in the editor, `--probe-input` on the CLI.
        self.given = given if given is not None else FixedInputs({})
        self.clients: dict[tuple, ProbeClient] = {}
        self.answers: dict[str, dict] = {}
        self.lock = threading.Lock()

    def has_worker(self, options: ProbeOptions) -> bool:
        """Whether a worker for these options is already running (no cold start ahead)."""
        python = probe_python(options, self.workspace, self.editor_python)
        client = self.clients.get((python, options))
        return client is not None and client.process is not None and client.process.poll() is None

    def client(self, options: ProbeOptions) -> ProbeClient:
        python = probe_python(options, self.workspace, self.editor_python)
        key = (python, options)
        with self.lock:
            if key not in self.clients:
                self.clients[key] = ProbeClient(python, options, cwd=self.workspace)
            return self.clients[key]

    def probe(self, analysis: "Analysis", shapes: "ShapeReport", options: ProbeOptions,
              folders: list[str] | None = None) -> ProbeReport:
        """Probe every target of the analysed file and attach the report to it (the three
        steps below, in one go: what the command line does)."""
        targets = self.plan(analysis, shapes)
        return self.fold(analysis, targets, self.ask(targets, options, folders))

    def plan(self, analysis: "Analysis", shapes: "ShapeReport") -> list[ProbeTarget]:
        """What to probe: reads the analysis and its shapes (the server runs it on the
        analysis thread, where versions are released)."""
        if analysis.tree is None or not analysis.uses_torch:
            return []
        return probe_targets(analysis.path or "<unsaved>", analysis.source, shapes,
                             self.given.for_file(analysis.path))

    def ask(self, targets: list[ProbeTarget], options: ProbeOptions, folders: list[str] | None) -> list[dict]:
        """The worker's answers (seconds on a cold start; touches no analysis)."""
        answers: list[dict] = []
        if not targets:
            return answers
        client = self.client(options)
        for target in targets:
            request = {**target.request, "folders": folders or None,
                       "cpu_fallback_bytes": options.memory * 1024 * 1024 // CPU_FALLBACK_FRACTION}
            answers.append(self.answer(client, request))
            if answers[-1].get("no_torch"):
                break  # one clear message is enough
        return answers

    @staticmethod
    def fold(analysis: "Analysis", targets: list[ProbeTarget], answers: list[dict]) -> ProbeReport:
        """The answers as a report, attached to the analysed version."""
        report = ProbeReport()
        for target, answer in zip(targets, answers):
            add_answer(report, target, answer, analysis.path or "<unsaved>", analysis.tree, analysis.lines)
        return analysis.facts.get_or_compute(PROBE_REPORT, lambda: report)

    def answer(self, client: ProbeClient, request: dict) -> dict:
        torch_version = client.hello.get("torch") if client.hello else None
        digest = hashlib.sha1(json.dumps([client.python, client.options.device, torch_version, request],
                                         sort_keys=True).encode()).hexdigest()
        cached = self.answers.get(digest)
        if cached is not None:
            return cached
        answer = client.probe(request)
        if answer.get("ok") or answer.get("shape_error"):  # a timeout or a crash may pass: ask again
            if len(self.answers) >= MAX_CACHED_ANSWERS:
                self.answers.pop(next(iter(self.answers)))
            self.answers[digest] = answer
        return answer

    def close(self) -> None:
        with self.lock:
            clients, self.clients = list(self.clients.values()), {}
        for client in clients:
            client.close()

    def kill_workers(self) -> None:
        """Kill every worker now, even one in the middle of a probe (which then fails):
        the server is going away."""
        for client in list(self.clients.values()):
            client.kill()
