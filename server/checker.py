"""The one core both front ends call: source text in, findings out.

`check_source` parses once (`analysis`), reports syntax errors as findings, and runs
the selected rules (`diagnostics`).  The CLI and the language server only present
what this returns, so they always agree.
"""
from __future__ import annotations

from dataclasses import dataclass

from server.analysis import Analysis, analyze
from server.diagnostics import Finding, run_rules
from server.settings import Settings

SYNTAX_ERROR_CODE = "syntax-error"


@dataclass
class CheckResult:
    analysis: Analysis
    findings: list[Finding]


def check_source(source: str, path: str | None = None, settings: Settings | None = None) -> CheckResult:
    settings = settings or Settings()
    analysis = analyze(source, path)
    findings = [syntax_finding(issue) for issue in analysis.syntax_errors]
    findings += run_rules(
        analysis,
        is_selected=lambda code: settings.is_selected(code, analysis.path),
        severity_of=settings.severity_of,
    )
    return CheckResult(analysis, findings)


def syntax_finding(issue) -> Finding:
    return Finding(
        code=SYNTAX_ERROR_CODE,
        message=issue.message + " The rest of the file is still checked.",
        line=issue.line,
        col=issue.col,
        end_line=issue.line,
        end_col=issue.end_col,
        severity="error",
    )
