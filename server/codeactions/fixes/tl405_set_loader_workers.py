"""TL405: give the `DataLoader` worker processes (`num_workers=`) and pinned memory
(`pin_memory=True`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from torch_lsp.syntax_nodes import argument
from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


_LOADER_POSITIONS = {"num_workers": 5, "pin_memory": 7}


@fixer("TL405", data=("add",))
def loader_workers(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    wanted = [item.split("=", 1) for item in finding.data.get("add", [])]
    if call is None or not wanted or any(name not in _LOADER_POSITIONS for name, _ in wanted):
        return []
    changed = {"set": [], "add": []}
    for name, value in wanted:
        verb = "set" if argument(call, _LOADER_POSITIONS[name], name) is not None else "add"
        changed[verb].append(f"`{name}={value}`")
    title = " and ".join(f"{verb} {' and '.join(items)}" for verb, items in changed.items() if items)

    def change(node: cst.Call) -> cst.Call:
        for name, value in wanted:
            node = calls.set_or_add_keyword(node, _LOADER_POSITIONS[name], name, value)
        return node

    return [offer(analysis, finding, title[0].upper() + title[1:], lambda rw: rw.change_call(call, change))]
