"""TL205: `torch.tensor(x)` of a tensor becomes `x.clone().detach()` (with `.to(...)` and
`.requires_grad_(...)` for the keywords it had)."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import libcst as cst

from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import call_at
from torch_lsp.codeactions.registry import FixOffer, fixer, offer
from torch_lsp.codeactions.rewrite import Rewrite
from torch_lsp.diagnostics.correctness.quoting import source_of

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


_COPY_KEYWORDS = {"dtype", "device", "requires_grad"}


@fixer("TL205")
def clone_detach(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None or len(call.args) != 1 or any(kw.arg not in _COPY_KEYWORDS for kw in call.keywords):
        return []
    data = source_of(analysis, call.args[0], 40)
    if not isinstance(call.args[0], (ast.Name, ast.Attribute, ast.Call, ast.Subscript)):
        data = f"({data})"
    methods = ("clone",) if data.endswith(".detach()") else ("clone", "detach")
    moves = [kw.arg for kw in call.keywords if kw.arg in ("dtype", "device")]
    shown = data + "".join(f".{m}()" for m in methods) + (".to(...)" if moves else "")
    if any(kw.arg == "requires_grad" for kw in call.keywords):
        shown += ".requires_grad_(...)"

    def plan(rw: Rewrite) -> None:
        ref, _ = rw.call(call)
        rw.change_call(call, lambda node: _copied(node, methods, moves, ref.group.module))

    return [offer(analysis, finding, f"Replace with `{shown}`", plan)]


def _copied(node: cst.Call, methods: tuple[str, ...], moves: list[str], module: cst.Module) -> cst.BaseExpression:
    """`torch.tensor(x, dtype=d)` -> `x.clone().detach().to(dtype=d)`."""
    value = calls.chained(calls.stripped(node.args[calls.find_argument(node, 0, None)].value), *methods, module=module)
    keywords = {arg.keyword.value: arg for arg in node.args if arg.keyword is not None}
    moved = [keywords[name].with_changes(comma=cst.MaybeSentinel.DEFAULT) for name in moves]
    if moved:
        value = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("to")), args=moved)
    if "requires_grad" in keywords:
        flag = cst.Arg(value=keywords["requires_grad"].value)
        value = cst.Call(func=cst.Attribute(value=value, attr=cst.Name("requires_grad_")), args=[flag])
    return value.with_changes(lpar=node.lpar, rpar=node.rpar)
