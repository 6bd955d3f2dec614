"""TL101: clear the gradients with `optimizer.zero_grad(set_to_none=True)` at the
top of the training loop."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import loop_at
from torch_lsp.codeactions.names import bound_in_loop
from torch_lsp.syntax_nodes import root_name
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL101", data=("optimizer",))
def insert_zero_grad(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    loop = loop_at(analysis, finding)
    optimizer = finding.data.get("optimizer")
    if loop is None or not optimizer or not _is_expression(optimizer):
        return []
    # The optimizer must be the same object at the top of the body as where it steps.
    if root_name(ast.parse(optimizer, mode="eval").body) in bound_in_loop(loop.node):
        return []
    text = f"{optimizer}.zero_grad(set_to_none=True)"
    # Safe only on an optimizer known to have `zero_grad` (the rule says which).
    return [offer(analysis, finding, f"Insert `{text}` at the top of the loop",
                  lambda rw: rw.insert_first(loop.node, text + "\n"), safety=finding.data.get("safety"))]


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True
