"""TL201: give the softmax an explicit `dim=-1`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.syntax_nodes import argument
from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer
from torch_lsp.codeactions.softmax_dim import softmax_dim_position

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL201")
def add_softmax_dim(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    position = softmax_dim_position(analysis, call) if call is not None else None
    if position is None:
        return []
    if argument(call, position, "dim") is None:
        return [offer(analysis, finding, "Add `dim=-1`",
                      lambda rw: rw.change_call(call, lambda node: calls.add_keyword(node, "dim", "-1")))]
    return [offer(analysis, finding, "Replace `dim=None` with `dim=-1`",
                  lambda rw: rw.change_call(call, lambda node: calls.set_argument(node, position, "dim", "-1")))]
