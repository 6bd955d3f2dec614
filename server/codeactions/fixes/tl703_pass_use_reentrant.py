"""TL703: pass `use_reentrant=False` to activation checkpointing."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL703")
def pass_use_reentrant(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None:
        return []
    return [offer(analysis, finding, "Add `use_reentrant=False`",
                  lambda rw: rw.change_call(call, lambda node: calls.add_keyword(node, "use_reentrant", "False")))]
