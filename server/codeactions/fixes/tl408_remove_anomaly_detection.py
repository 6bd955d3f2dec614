"""TL408: remove `set_detect_anomaly(True)` / `detect_anomaly()`, or run it only when
`TORCH_DETECT_ANOMALY` is set."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import libcst as cst

from torch_lsp.codeactions.imports import use_module
from torch_lsp.codeactions.locate import call_at, on_lines_of_its_own, text_of
from torch_lsp.codeactions.registry import FixOffer, fixer, importing, offer
from torch_lsp.codeactions.rewrite import CannotRewrite, Rewrite

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL408")
def remove_anomaly_detection(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    stmt = analysis.statement_of(call) if call is not None else None
    if stmt is None:
        return []
    shown = text_of(analysis, call)
    if isinstance(stmt, ast.Expr) and stmt.value is call:
        def guard(rw: Rewrite) -> None:
            os_name = use_module(rw, "os", stmt)
            rw.wrap([stmt], f'if {os_name}.environ.get("TORCH_DETECT_ANOMALY")')

        offers = [offer(analysis, finding, f"Remove `{shown}`", lambda rw: rw.remove(stmt))]
        if on_lines_of_its_own(analysis, stmt):
            offers.append(offer(analysis, finding, f"Run `{shown}` only when `TORCH_DETECT_ANOMALY` is set"
                                + importing(analysis, "os", stmt), guard, preferred=False))
        return offers
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(item.context_expr is call for item in stmt.items):
        if len(stmt.items) == 1:
            return [offer(analysis, finding, f"Remove `with {shown}:` and keep its body", lambda rw: rw.unwrap(stmt))]
        position = [item.context_expr for item in stmt.items].index(call)
        return [offer(analysis, finding, f"Remove `{shown}` from the `with` statement",
                      lambda rw: rw.change_statement(stmt, lambda node: _without_item(node, position)))]
    return []


def _without_item(node: cst.With, position: int) -> cst.With:
    items = [item for index, item in enumerate(node.items) if index != position]
    if not items:
        raise CannotRewrite("a `with` needs at least one item")
    items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(items=items)
