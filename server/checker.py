"""The one core both front ends call: source text in, findings out.

`check_source` parses once (`analysis`), reports syntax errors as findings, and runs
the selected rules (`diagnostics`).  The CLI and the language server only present
what this returns, so they always agree.
"""
from __future__ import annotations

import gc
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.diagnostics import Finding, all_rules, run_rules
from torch_lsp.incremental_parse import ParsedVersion
from torch_lsp.rule_parts import run_rules_in_parts
from torch_lsp.settings import Settings
from torch_lsp.shapes.limits import Superseded
from torch_lsp.torch_version import target_version

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

SYNTAX_ERROR_CODE = "syntax-error"


@dataclass
class CheckResult:
    analysis: Analysis
    findings: list[Finding]
    # Seconds spent parsing and building the facts: the part of a check that cannot stop
    # once its version is typed past (the rules and the shape pass can, `run_rules`).
    analysed_in: float = 0.0


@contextmanager
def collector_paused():
    """Pause Python's cyclic garbage collector while a file is analysed.

    Parsing and analysis allocate tens of objects per line (AST nodes, facts) and free
    them together; with the collector on, its passes walk every one of them again and
    again mid-way, which costs more than the analysis itself (measured: `ast.parse` of
    2,000 lines takes 30 ms with the collector paused and often twice that without).
    Cycles left behind are collected as soon as it resumes.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def check_source(source: str, path: str | None = None, settings: Settings | None = None,
                 *, shapes: bool = True, previous: ParsedVersion | None = None) -> CheckResult:
    """Every finding for `source`; with `shapes=False`, all but the rules that need the
    shape pass (`add_shape_findings` completes such a result later).  `previous`, an
    earlier version of the same document, lets an edit of it be parsed in part."""
    with collector_paused():
        return _check(source, path, settings or Settings(), shapes, previous)


def add_shape_findings(result: CheckResult, settings: Settings | None = None) -> CheckResult:
    """`result` (from `check_source(..., shapes=False)`) completed with the shape rules,
    on the same analysis."""
    settings = settings or Settings()
    analysis = result.analysis
    with collector_paused():
        try:
            extra = run_rules_in_parts(
                analysis,
                is_selected=lambda code: _needs(code, "needs_shapes") and settings.is_selected(code, analysis.path),
                severity_of=settings.severity_of,
            )
        except Superseded:
            _release_stopped(analysis)
            raise
    return CheckResult(analysis, sorted(result.findings + extra, key=lambda f: f.sort_key))


def _release_stopped(analysis) -> None:
    """A check stopped after its shape pass ran (a first pass in parts goes on though typed
    past): no result holds its report, so its parts are handed back now (the next version
    takes over those kept for it) instead of waiting, cycles and all, for a full collection."""
    from torch_lsp.shapes import release_shapes

    release_shapes(analysis)


def add_probe_findings(result: CheckResult, settings: Settings | None = None) -> CheckResult:
    """`result` completed with the rules that read the shape probe's report (TL502), once a
    front end has probed its analysis (`torch_lsp.shapes.probe.session`)."""
    settings = settings or Settings()
    analysis = result.analysis
    extra = run_rules(
        analysis,
        is_selected=lambda code: _needs(code, "needs_probe") and settings.is_selected(code, analysis.path),
        severity_of=settings.severity_of,
    )
    # A version probed again (on a new input shape) replaces what the last probe found.
    kept = [f for f in result.findings if not _needs(f.code, "needs_probe")]
    return CheckResult(analysis, sorted(kept + extra, key=lambda f: f.sort_key))


def load_rules_and_shape_engine() -> None:
    """Import every rule and the whole shape engine now (a language server does so right
    after answering `initialize`, which does not wait for them), so that the first check
    does not pay for it."""
    all_rules()
    import torch_lsp.analysis  # noqa: F401
    import torch_lsp.project_wrappers  # noqa: F401 - `analysis` imports it on first use
    import torch_lsp.shapes.interpret  # noqa: F401 - imported for its side effect: loaded
    import torch_lsp.shapes.report  # noqa: F401


def _check(source: str, path: str | None, settings: Settings, shapes: bool,
           previous: ParsedVersion | None = None) -> CheckResult:
    # Imported here: the language server imports this module before answering `initialize`,
    # which needs no analysis (the rules and the analysis load right after, on their thread).
    from torch_lsp.analysis import analyze

    started = time.perf_counter()
    analysis = analyze(source, path, target_version(settings, path), previous)
    analysed_in = time.perf_counter() - started
    issues = analysis.syntax_errors
    if issues and _is_notebook_program(analysis):
        from torch_lsp.notebook_magics import told_as_shell_commands
        from torch_lsp.notebooks import CELL_SEPARATOR

        issues = told_as_shell_commands(issues, analysis.lines.line_text, CELL_SEPARATOR)
    findings = [syntax_finding(issue) for issue in issues]
    try:
        findings += run_rules_in_parts(
            analysis,
            is_selected=lambda code: (shapes or not _needs(code, "needs_shapes")) and not _needs(code, "needs_probe")
            and settings.is_selected(code, analysis.path),
            severity_of=settings.severity_of,
        )
    except Superseded as stopped:
        stopped.parsed = analysis.parsed  # the next version parses its edit from this one
        _release_stopped(analysis)
        raise
    # In position order, as `add_shape_findings` gives them: a version shows the same list
    # whichever way it was checked (in one step, or in two).
    return CheckResult(analysis, sorted(findings, key=lambda f: f.sort_key), analysed_in)


def _is_notebook_program(analysis) -> bool:
    from torch_lsp.notebooks import is_notebook_program  # the server answers `initialize` before importing it

    return is_notebook_program(analysis)


def _needs(code: str, what: str) -> bool:
    """Whether the rule `code` needs the shape pass ("needs_shapes") or the probe ("needs_probe")."""
    rule = all_rules().get(code)
    return rule is not None and getattr(rule, what)


def syntax_finding(issue) -> Finding:
    return Finding(
        code=SYNTAX_ERROR_CODE,
        message=issue.message + (" The rest of the file is still checked." if issue.rest_checked
                                 else " Nothing in this file was checked."),
        line=issue.line,
        col=issue.col,
        end_line=issue.line,
        end_col=issue.end_col,
        severity="error",
    )
