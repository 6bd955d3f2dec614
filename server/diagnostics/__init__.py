"""The rule registry and the one entry point both front ends use.

`run_rules(analysis, selection)` runs every selected rule over an `Analysis`,
applies `# noqa` comments and returns sorted findings.  The CLI and the language
server call exactly this, so they always agree.
"""
from __future__ import annotations

import re
from typing import Callable, Iterable

from torch_lsp.diagnostics.base import Finding, FixInfo, Rule
from torch_lsp.shapes.limits import Superseded, stop_request

RULES: dict[str, type[Rule]] = {}

# Per-line and per-file work caps: one pathological line must not freeze the editor.
MAX_FINDINGS_PER_LINE = 20
MAX_FINDINGS_PER_FILE = 2000

_NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)


def register(rule: type[Rule]) -> type[Rule]:
    if rule.code in RULES:
        raise ValueError(f"rule code {rule.code} registered twice")
    RULES[rule.code] = rule
    return rule


def _load_rule_modules() -> None:
    # Importing a family package imports its rule modules (`training/tl101_missing_zero_grad.py`
    # and so on), which registers their rules.
    from torch_lsp.diagnostics import (  # noqa: F401
        training,
        correctness,
        memory,
        performance,
        shapes,
        compile,
        api,
    )


def all_rules() -> dict[str, type[Rule]]:
    # Always load every family: a module imported on its own first (a fix importing
    # `torch_lsp.diagnostics.correctness.provenance`) has already registered some rules, not all.
    _load_rule_modules()
    return dict(sorted(RULES.items()))


def noqa_match(line_text: str) -> re.Match | None:
    """The `# noqa` comment on this line (its `codes` group spans the listed codes), or None."""
    return _NOQA.search(line_text)


def noqa_codes(line_text: str) -> set[str] | None:
    """Codes silenced by a `# noqa` comment on this line; empty set = all; None = no comment."""
    match = _NOQA.search(line_text)
    if not match:
        return None
    codes = match.group("codes")
    if not codes:
        return set()
    return {c.upper() for c in re.split(r"[\s,]+", codes) if c}


def is_suppressed(finding: Finding, line_text: str) -> bool:
    codes = noqa_codes(line_text)
    return codes is not None and (not codes or finding.code in codes)


def run_rules(analysis, is_selected: Callable[[str], bool] = lambda code: True,
              severity_of: Callable[[str], str | None] = lambda code: None) -> list[Finding]:
    """Findings of every selected rule, `# noqa` applied, sorted by position.  Run under
    `shapes.limits.stopping_when`, it raises `Superseded` between two rules once its check is
    no longer wanted: the newest version's check, queued behind it, starts that much sooner."""
    findings: list[Finding] = []
    if not analysis.uses_torch:
        return findings
    per_line: dict[int, int] = {}
    stop_requested = stop_request()
    for code, rule_cls in all_rules().items():
        if not is_selected(code):
            continue
        if stop_requested is not None and stop_requested():
            raise Superseded()
        for finding in rule_cls().check(analysis):
            if is_suppressed(finding, analysis.lines.line_text(finding.line)):
                continue
            if per_line.get(finding.line, 0) >= MAX_FINDINGS_PER_LINE:
                continue
            per_line[finding.line] = per_line.get(finding.line, 0) + 1
            override = severity_of(code)
            if override:
                finding.severity = override
                if finding.raised_in is not None:
                    finding.raised_in.finding.severity = override
            findings.append(finding)
    return merge_findings(findings)


def merge_findings(findings: Iterable[Finding]) -> list[Finding]:
    """Findings of several runs as one run gives them: each once, at most
    `MAX_FINDINGS_PER_LINE` per line, sorted by position, at most `MAX_FINDINGS_PER_FILE`."""
    per_line: dict[int, int] = {}
    kept = []
    for finding in _dedupe(findings):
        if per_line.get(finding.line, 0) < MAX_FINDINGS_PER_LINE:
            per_line[finding.line] = per_line.get(finding.line, 0) + 1
            kept.append(finding)
    kept.sort(key=lambda f: f.sort_key)
    return kept[:MAX_FINDINGS_PER_FILE]


def _dedupe(findings: Iterable[Finding]) -> list[Finding]:
    seen, unique = set(), []
    for f in findings:
        key = (f.code, f.line, f.col, f.end_line, f.end_col)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


__all__ = ["Finding", "FixInfo", "Rule", "RULES", "register", "all_rules", "run_rules", "merge_findings", "noqa_codes"]
