"""From a finding's range back to the `ast` nodes a fix works on.

Findings carry `ast` positions (1-based line, UTF-8 byte column).  Each rule reports a
known kind of node (see `../shared/corpus/README.md`): a call, a statement, a loop
header, or the `.cuda()` part of a call (`method_span`).  When a client drops a
diagnostic's `data`, `finding_at` re-runs that one rule on the analysis and picks the
finding with the same range, so the fix gets the same facts as before.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis, LoopInfo
    from torch_lsp.diagnostics.base import Finding


def span(node: ast.AST) -> tuple[int, int, int, int]:
    return node.lineno, node.col_offset, node.end_lineno, node.end_col_offset


def finding_span(finding: "Finding") -> tuple[int, int, int, int]:
    return finding.line, finding.col, finding.end_line, finding.end_col


def call_at(analysis: "Analysis", finding: "Finding") -> ast.Call | None:
    """The call a finding reports: spanning exactly its range, or `.m(...)` of `x.m(...)`."""
    wanted = finding_span(finding)
    starting = []
    for call in analysis.calls:
        if span(call) == wanted:
            return call
        func = call.func
        if (
            isinstance(func, ast.Attribute)
            and (func.value.end_lineno, func.value.end_col_offset) == wanted[:2]
            and (call.end_lineno, call.end_col_offset) == wanted[2:]
        ):
            return call
        if (call.lineno, call.col_offset) == wanted[:2]:
            starting.append(call)
    return starting[0] if starting else None


def statement_at(analysis: "Analysis", finding: "Finding") -> ast.stmt | None:
    """The statement starting where the finding starts (or holding the call it reports)."""
    for stmt in analysis.statements:
        if (stmt.lineno, stmt.col_offset) == (finding.line, finding.col):
            return stmt
    call = call_at(analysis, finding)
    return analysis.statement_of(call) if call is not None else None


def loop_at(analysis: "Analysis", finding: "Finding") -> "LoopInfo | None":
    """The loop whose header the finding reports (TL101, TL102)."""
    for loop in analysis.loops:
        if (loop.node.lineno, loop.node.col_offset) == (finding.line, finding.col):
            return loop
    return None


def keyword_at(analysis: "Analysis", finding: "Finding") -> tuple[ast.Call, ast.keyword] | None:
    """The `name=value` keyword a finding spans, with its call."""
    wanted = finding_span(finding)
    for call in analysis.calls:
        for kw in call.keywords:
            if span(kw) == wanted:
                return call, kw
    return None


def finding_at(analysis: "Analysis", code: str, line: int, col: int,
               end_line: int | None = None, end_col: int | None = None) -> "Finding | None":
    """Re-run the rule `code` and return its finding at this `ast` range (for clients that drop
    `Diagnostic.data`).  The exact range wins; else the first finding starting there; else the
    first on that line."""
    from torch_lsp.diagnostics import all_rules

    rule = all_rules().get(code)
    if rule is None or not analysis.uses_torch:
        return None
    findings = list(rule().check(analysis))
    for finding in findings:
        if finding_span(finding) == (line, col, end_line, end_col):
            return finding
    for finding in findings:
        if (finding.line, finding.col) == (line, col):
            return finding
    for finding in findings:
        if finding.line == line:
            return finding
    return None


def text_of(analysis: "Analysis", node: ast.AST, limit: int = 60) -> str:
    """The node's source text for a title: on one line, shortened past `limit` characters."""
    lines = [analysis.lines.line_text(n) for n in range(node.lineno, node.end_lineno + 1)]
    encoded = [line.encode("utf-8") for line in lines]
    if len(encoded) == 1:
        text = encoded[0][node.col_offset:node.end_col_offset].decode("utf-8", "replace")
    else:
        middle = [e.decode("utf-8", "replace") for e in encoded[1:-1]]
        text = "\n".join([encoded[0][node.col_offset:].decode("utf-8", "replace"), *middle,
                          encoded[-1][:node.end_col_offset].decode("utf-8", "replace")])
        text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def on_lines_of_its_own(analysis: "Analysis", stmt: ast.stmt) -> bool:
    """The statement shares none of its lines with another statement (`a; b`) nor with the
    header of its block (`if c: a`), so it can be moved, wrapped or followed by a block."""
    first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
    before = analysis.lines.line_text(first).encode("utf-8")
    if first == stmt.lineno and before[: stmt.col_offset].strip():
        return False
    parent = analysis.parents.get(stmt)
    siblings = analysis.tree.body if parent is None else [
        s for name in ("body", "orelse", "finalbody") for s in getattr(parent, name, [])
    ]
    return not any(
        other is not stmt and other.lineno <= stmt.end_lineno and first <= other.end_lineno
        for other in siblings
    )
