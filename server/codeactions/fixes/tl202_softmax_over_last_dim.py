"""TL202: take the softmax over the last dim (`dim=-1`) instead of the batch dim."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.syntax_nodes import argument
from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer
from torch_lsp.codeactions.softmax_dim import softmax_dim_position

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL202")
def softmax_over_last_dim(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    position = softmax_dim_position(analysis, call) if call is not None else None
    dim = argument(call, position, "dim") if position is not None else None
    if dim is None:
        return []
    return [offer(analysis, finding, f"Replace `dim={ast.unparse(dim)}` with `dim=-1`",
                  lambda rw: rw.change_call(call, lambda node: calls.set_argument(node, position, "dim", "-1")))]
