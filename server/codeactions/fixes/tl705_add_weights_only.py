"""TL705: load with `weights_only=True`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer
from torch_lsp.diagnostics.api.tl705_torch_load_unsafe import passes_pickle_module

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL705")
def add_weights_only(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None or passes_pickle_module(call):
        return []
    # Safe only where it states the default (torch 2.6 on): the rule says which.
    safety = finding.fix.safety if finding.fix is not None else None
    return [offer(analysis, finding, "Add `weights_only=True`",
                  lambda rw: rw.change_call(call, lambda node: calls.add_keyword(node, "weights_only", "True")),
                  safety=safety)]
