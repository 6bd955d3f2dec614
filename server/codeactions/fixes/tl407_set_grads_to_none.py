"""TL407: set gradients to None instead of writing zeros (`set_to_none=True`, `p.grad = None`)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.syntax_nodes import receiver
from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer
from torch_lsp.codeactions.rewrite import Rewrite

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL407")
def gradients_to_none(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None or not isinstance(call.func, ast.Attribute):
        return []
    if call.func.attr == "zero_grad":
        return [offer(analysis, finding, "Use `set_to_none=True`",
                      lambda rw: rw.change_call(call, lambda node: calls.set_argument(node, 0, "set_to_none", "True")))]
    stmt = analysis.statement_of(call)
    target = receiver(call)
    if isinstance(target, ast.Attribute) and target.attr == "data":
        target = target.value
    if not (isinstance(stmt, ast.Expr) and stmt.value is call and isinstance(target, ast.Attribute)):
        return []
    text = f"{ast.unparse(target)} = None"

    def plan(rw: Rewrite) -> None:
        assign = rw.statements(rw.ref(stmt).group, text + "\n")[0].body[0]
        rw.change_statement(stmt, lambda node: assign.with_changes(semicolon=node.semicolon))

    return [offer(analysis, finding, f"Set `{text}` instead", plan)]
