"""TL108: move `scheduler.step()` after the optimizer step it precedes."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import call_at, on_lines_of_its_own, text_of
from torch_lsp.codeactions.names import bound_in, contains
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
    step = _reported_optimizer_step(analysis, call, finding) or _first_optimizer_step(analysis, call)
    moved = _movable_unit(analysis, stmt, step) if step is not None else None
    anchor = _later_sibling_holding(analysis, moved, step) if moved is not None else None
    scheduler = _receiver_path(call.func)
    if anchor is None or scheduler is None or not on_lines_of_its_own(analysis, moved):
        return []
    if not on_lines_of_its_own(analysis, anchor):
        return []
    between = _statements_between(analysis, moved, anchor)
    if any(_mentions(s, scheduler) for s in between):
        return []  # something between reads the scheduler (the learning rate it logs would change)
    if moved is not stmt and _names(moved.test) & bound_in(between):
        return []  # the guard's value may change on the way
    step_text, optimizer_text = text_of(analysis, call), text_of(analysis, step)
    # A trainer's scheduler (`self.sched`) may be read by any method called between
    # (`self.log_lr()`): moving it is offered, but not as safe.
    safety = "unsafe" if len(scheduler) > 1 else None
    return [offer(analysis, finding, f"Move `{step_text}` after `{optimizer_text}`",
                  lambda rw: rw.move(moved, anchor, "after"), safety=safety)]


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


def _reported_optimizer_step(analysis: "Analysis", call: ast.Call, finding: "Finding") -> ast.Call | None:
    """The optimizer step the rule found (`self.opt.step()` on a trainer), by its line."""
    loop = analysis.context(call).loop
    line = finding.data.get("optimizer_step_line")
    if loop is None or not isinstance(line, int):
        return None
    steps = [c for c in loop.calls if c.lineno == line and isinstance(c.func, ast.Attribute) and c.func.attr == "step"]
    return steps[0] if len(steps) == 1 else None


def _receiver_path(func: ast.AST) -> tuple[str, ...] | None:
    """`scheduler.step` -> ("scheduler",); `self.sched.step` -> ("self", "sched")."""
    if not isinstance(func, ast.Attribute):
        return None
    parts: list[str] = []
    node = func.value
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return (node.id, *reversed(parts))


def _mentions(stmt: ast.stmt, path: tuple[str, ...]) -> bool:
    """Whether `stmt` reads the object at `path` (`self.sched`, not just any `self.…`)."""
    for node in ast.walk(stmt):
        if isinstance(node, (ast.Name, ast.Attribute)) and _receiver_path(ast.Attribute(value=node, attr="")) == path:
            return True
    return False


def _statements_between(analysis: "Analysis", first: ast.stmt, last: ast.stmt) -> list[ast.stmt]:
    block = analysis.block_of(first) or []
    return block[block.index(first) + 1: block.index(last)]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
