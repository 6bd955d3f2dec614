"""TL402: move a module's `.cuda()` / `.to(device)` / `.cpu()` out of the loop.

The statement (`model.cuda()`, `model.to(device)`, `model = model.to(device)`) moves to
just before the outermost enclosing loop in which everything it uses is already
defined: it must sit directly in the body of each loop it leaves (not under an `if`,
`with` or `try`, which would make running it conditional), no loop it leaves may rebind
any name it reads, and each of those names must have a value before the loop.  When
that cannot be shown, no fix is offered.  Comment lines directly above the statement
move with it.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import call_at, on_lines_of_its_own, text_of
from torch_lsp.codeactions.names import bound_by_statements, defined_before, loaded_names
from torch_lsp.codeactions.registry import FixOffer, fixer, offer
from torch_lsp.syntax_nodes import dotted, moved_value, receiver

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis, LoopInfo
    from torch_lsp.diagnostics.base import Finding


@fixer("TL402")
def hoist_module_move(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    stmt = analysis.statement_of(call) if call is not None else None
    if stmt is None or moved_value(stmt, dotted(receiver(call))) is not call or not on_lines_of_its_own(analysis, stmt):
        return []
    target = _outermost_loop(analysis, stmt, call)
    if target is None:
        return []
    shown = text_of(analysis, stmt)
    levels = len(analysis.context(call).loops) - analysis.context(call).loops.index(target)
    where = "the loop" if levels == 1 else f"the outer loop (line {target.node.lineno})"
    return [offer(analysis, finding, f"Move `{shown}` before {where}", lambda rw: rw.move(stmt, target.node, "before"))]


def _outermost_loop(analysis: "Analysis", stmt: ast.stmt, call: ast.Call) -> "LoopInfo | None":
    loops = analysis.context(call).loops
    function = analysis.context(call).function
    used = loaded_names(stmt)
    chosen, inner = None, stmt
    for loop in reversed(loops):
        if not any(s is inner for s in loop.node.body):
            break  # under an `if`/`with`/`try` inside this loop: running it is conditional
        rebound = bound_by_statements(loop.statements, besides=stmt) | _loop_target_names(loop.node)
        if used & rebound:
            break
        chosen, inner = loop, loop.node
    if chosen is None:
        return None
    if not all(defined_before(analysis, function, name, chosen.node.lineno) for name in used):
        return None
    return chosen


def _loop_target_names(node: ast.AST) -> set[str]:
    if isinstance(node, (ast.For, ast.AsyncFor)):
        return {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
    return set()
