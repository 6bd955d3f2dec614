"""TL108: move `scheduler.step()` after the optimizer step it precedes."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import call_at, on_lines_of_its_own, text_of
from torch_lsp.codeactions.names import bound_in, contains, root_name
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL108")
def step_scheduler_after_optimizer(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    stmt = analysis.statement_of(call) if call is not None else None
    if not (isinstance(stmt, ast.Expr) and stmt.value is call):
        return []
    step = _first_optimizer_step(analysis, call)
    moved = _movable_unit(analysis, stmt, step) if step is not None else None
    anchor = _later_sibling_holding(analysis, moved, step) if moved is not None else None
    scheduler = root_name(call.func)
    if anchor is None or scheduler is None or not on_lines_of_its_own(analysis, moved):
        return []
    if not on_lines_of_its_own(analysis, anchor):
        return []
    between = _statements_between(analysis, moved, anchor)
    if any(scheduler in _names(s) for s in between):
        return []  # something between reads the scheduler (the learning rate it logs would change)
    if moved is not stmt and _names(moved.test) & bound_in(between):
        return []  # the guard's value may change on the way
    step_text, optimizer_text = text_of(analysis, call), text_of(analysis, step)
    return [offer(analysis, finding, f"Move `{step_text}` after `{optimizer_text}`",
                  lambda rw: rw.move(moved, anchor, "after"))]


def _movable_unit(analysis: "Analysis", stmt: ast.stmt, step: ast.Call) -> ast.stmt | None:
    """The statement to move: the scheduler step itself when the optimizer step is in a later
    statement of the same block; else the `if` around it when that `if` only steps schedulers
    (`if epoch == 0: warmup.step()`), has no `else` and a test without calls."""
    if _later_sibling_holding(analysis, stmt, step) is not None:
        return stmt
    guard = analysis.parents.get(stmt)
    roles = analysis.roles_for(stmt)
    if not isinstance(guard, ast.If) or guard.orelse or any(isinstance(n, ast.Call) for n in ast.walk(guard.test)):
        return None
    for inner in guard.body:
        if not (isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Call) and roles.is_scheduler_step(inner.value)):
            return None
    return guard


def _later_sibling_holding(analysis: "Analysis", stmt: ast.stmt, node: ast.AST) -> ast.stmt | None:
    """The statement after `stmt` in its block that holds `node`."""
    block = analysis.block_of(stmt)
    if block is None:
        return None
    for sibling in block[block.index(stmt) + 1:]:
        if contains(sibling, node):
            return sibling
    return None


def _first_optimizer_step(analysis: "Analysis", call: ast.Call) -> ast.Call | None:
    loop = analysis.context(call).loop
    roles = analysis.roles_for(call)
    if loop is None:
        return None
    steps = [c for c in loop.calls if roles.is_optimizer_step(c)]
    return min(steps, key=lambda c: (c.lineno, c.col_offset)) if steps else None


def _statements_between(analysis: "Analysis", first: ast.stmt, last: ast.stmt) -> list[ast.stmt]:
    block = analysis.block_of(first) or []
    return block[block.index(first) + 1: block.index(last)]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
