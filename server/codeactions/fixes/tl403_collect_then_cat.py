"""TL403: collect the pieces in a list inside the loop and join them once after it."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import libcst as cst

from torch_lsp.syntax_nodes import keyword
from torch_lsp.codeactions.locate import call_at, text_of
from torch_lsp.codeactions.names import defined_before, fresh_name
from torch_lsp.codeactions.registry import FixOffer, fixer, offer
from torch_lsp.codeactions.rewrite import Rewrite

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


# Growing with these and joining once gives the same tensor (`stack` would not).
_JOINS_ONCE = {"torch.cat", "torch.concat", "torch.concatenate", "torch.vstack", "torch.hstack"}


@fixer("TL403")
def collect_then_cat(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    stmt = analysis.statement_of(call) if call is not None else None
    loop = analysis.context(call).loop if call is not None else None
    if loop is None or analysis.call_qualname(call) not in _JOINS_ONCE or keyword(call, "out") is not None:
        return []
    if not (isinstance(stmt, ast.Assign) and stmt.value is call and isinstance(stmt.targets[0], ast.Name)):
        return []
    accumulator = stmt.targets[0].id
    pieces = call.args[0].elts
    if not pieces or not (isinstance(pieces[0], ast.Name) and pieces[0].id == accumulator) or len(pieces) < 2:
        return []
    if any(isinstance(p, ast.Starred) or (isinstance(p, ast.Name) and p.id == accumulator) for p in pieces[1:]):
        return []
    if loop.node.orelse or not defined_before(analysis, loop.function, accumulator, loop.node.lineno):
        return []
    function = analysis.context(stmt).function
    parts = fresh_name(analysis, function, f"{accumulator}_parts")
    join = text_of(analysis, call.func)
    method = "append" if len(pieces) == 2 else "extend"

    def plan(rw: Rewrite) -> None:
        rest = "".join(f", {rw.source.segment(a)}" for a in [*call.args[1:], *call.keywords])
        rw.insert_before(loop.node, f"{parts} = [{accumulator}]\n", take_comments=False)
        template = rw.statements(rw.ref(stmt).group, f"{parts}.{method}(_)\n")[0].body[0]
        rw.change_statement(stmt, lambda node: _collect(node, template, method))
        rw.insert_after(loop.node, f"{accumulator} = {join}({parts}{rest})\n")

    title = f"Collect into a list and call `{join}` once after the loop"
    return [offer(analysis, finding, title, plan)]


def _collect(assign: cst.Assign, template: cst.Expr, method: str) -> cst.Expr:
    """`acc = torch.cat([acc, x])` -> `acc_parts.append(x)` (`.extend([x, y])` for more)."""
    elements = assign.value.args[0].value.elements
    if method == "append":
        value = elements[1].value
    else:
        rest = [e.with_changes(comma=cst.MaybeSentinel.DEFAULT) for e in elements[1:]]
        value = cst.List(elements=rest)
    call = template.value
    return template.with_changes(value=call.with_changes(args=[call.args[0].with_changes(value=value)]))
