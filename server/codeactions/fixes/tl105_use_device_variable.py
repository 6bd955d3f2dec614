"""TL105: use the file's device variable instead of a hard-coded `.cuda()`, `.to("cuda")`
or `device="cuda"`."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.syntax_nodes import argument, keyword
from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at, keyword_at, text_of
from torch_lsp.codeactions.names import bound_in
from torch_lsp.codeactions.registry import FixOffer, fixer, offer

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL105", data=("device", "form", "safety"))
def use_device_variable(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    device, form = finding.data.get("device"), finding.data.get("form")
    found = keyword_at(analysis, finding) if form == "keyword" else None
    call = found[0] if found else call_at(analysis, finding)
    if not device or call is None or not _device_visible(analysis, device, call):
        return []
    if form == "keyword":
        if found is None:
            return []
        kw = found[1]
        return [offer(analysis, finding, f"Replace `{text_of(analysis, kw)}` with `device={device}`",
                      lambda rw: rw.change_call(call, lambda node: calls.set_keyword(node, kw.arg, device)))]
    if not isinstance(call.func, ast.Attribute):
        return []
    if form == "cuda":
        shown = text_of(analysis, call)[len(text_of(analysis, call.func.value, limit=10**6)):]
        # `.cuda(args.gpu)` may name another GPU than the device variable: never a safe fix.
        return [offer(analysis, finding, f"Replace `{shown}` with `.to({device})`",
                      lambda rw: rw.change_call(call, lambda node: calls.cuda_to_device(node, device)),
                      safety=finding.data.get("safety"))]
    target = argument(call, 0, "device")
    if target is None:
        return []
    return [offer(analysis, finding, f"Replace `{text_of(analysis, target)}` with `{device}`",
                  lambda rw: rw.change_call(call, lambda node: calls.set_argument(node, 0, "device", device)))]


def _device_visible(analysis: "Analysis", device: str, use: ast.Call) -> bool:
    """The device variable has a value at `use`: a parameter of the function, bound earlier in
    it, or bound at module level (before the use, for module-level code)."""
    function = analysis.context(use).function
    if device in function.params:
        return True
    for stmt in analysis.statements:
        if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or device not in bound_in([stmt]):
            continue
        owner = analysis.context(stmt).function
        if owner.is_module and (not function.is_module or stmt.end_lineno < use.lineno):
            return True
        if owner is function and stmt.end_lineno < use.lineno:
            return True
    return False
