"""TL203: `.view(...)` after a transpose becomes `.reshape(...)`."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL203")
def view_to_reshape(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None or not isinstance(call.func, ast.Attribute) or call.func.attr != "view":
        return []
    return [offer(analysis, finding, "Replace `.view(...)` with `.reshape(...)`",
                  lambda rw: rw.change_call(call, lambda node: calls.rename_method(node, "reshape")))]
