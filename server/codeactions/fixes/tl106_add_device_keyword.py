"""TL106: create the tensor on the input's device: add `device=<input>.device`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.syntax_nodes import keyword
from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL106", data=("input",))
def add_device_keyword(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    source = finding.data.get("input")
    if call is None or not source or keyword(call, "device") is not None:
        return []
    value = f"{source}.device"
    return [offer(analysis, finding, f"Add `device={value}`",
                  lambda rw: rw.change_call(call, lambda node: calls.add_keyword(node, "device", value)))]
