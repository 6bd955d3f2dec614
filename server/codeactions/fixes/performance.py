"""Fixes for TL4xx (TL402 lives in `hoist`): one concatenation after the loop, DataLoader
workers and pinned memory, gradients set to None, anomaly detection removed."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import libcst as cst

from server.analysis import argument, keyword, receiver
from server.codeactions import calls
from server.codeactions.imports import use_module
from server.codeactions.locate import call_at, on_lines_of_its_own, text_of
from server.codeactions.names import defined_before, fresh_name
from server.codeactions.registry import FixOffer, fixer, importing, offer
from server.codeactions.rewrite import CannotRewrite, Rewrite

if TYPE_CHECKING:
    from server.analysis import Analysis
    from server.diagnostics.base import Finding


# ------------------------------------------------------------------- TL403
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


# ------------------------------------------------------------------- TL405
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


# ------------------------------------------------------------------- TL407
@fixer("TL407")
def gradients_to_none(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None or not isinstance(call.func, ast.Attribute):
        return []
    if call.func.attr == "zero_grad":
        return [offer(analysis, finding, "Use `set_to_none=True`",
                      lambda rw: rw.change_call(call, lambda node: calls.set_keyword(node, "set_to_none", "True")))]
    stmt = analysis.statement_of(call)
    target = receiver(call)
    if isinstance(target, ast.Attribute) and target.attr == "data":
        target = target.value
    if not (isinstance(stmt, ast.Expr) and stmt.value is call and isinstance(target, ast.Attribute)):
        return []
    text = f"{ast.unparse(target)} = None"

    def plan(rw: Rewrite) -> None:
        assign = rw.statements(rw.ref(stmt).group, text + "\n")[0].body[0]
        rw.change_statement(stmt, lambda node: assign.with_changes(semicolon=node.semicolon))

    return [offer(analysis, finding, f"Set `{text}` instead", plan)]


# ------------------------------------------------------------------- TL408
@fixer("TL408")
def remove_anomaly_detection(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    stmt = analysis.statement_of(call) if call is not None else None
    if stmt is None:
        return []
    shown = text_of(analysis, call)
    if isinstance(stmt, ast.Expr) and stmt.value is call:
        def guard(rw: Rewrite) -> None:
            os_name = use_module(rw, "os", stmt)
            rw.wrap([stmt], f'if {os_name}.environ.get("TORCH_DETECT_ANOMALY")')

        offers = [offer(analysis, finding, f"Remove `{shown}`", lambda rw: rw.remove(stmt))]
        if on_lines_of_its_own(analysis, stmt):
            offers.append(offer(analysis, finding, f"Run `{shown}` only when `TORCH_DETECT_ANOMALY` is set"
                                + importing(analysis, "os", stmt), guard, preferred=False))
        return offers
    if isinstance(stmt, (ast.With, ast.AsyncWith)) and any(item.context_expr is call for item in stmt.items):
        if len(stmt.items) == 1:
            return [offer(analysis, finding, f"Remove `with {shown}:` and keep its body", lambda rw: rw.unwrap(stmt))]
        position = [item.context_expr for item in stmt.items].index(call)
        return [offer(analysis, finding, f"Remove `{shown}` from the `with` statement",
                      lambda rw: rw.change_statement(stmt, lambda node: _without_item(node, position)))]
    return []


def _without_item(node: cst.With, position: int) -> cst.With:
    items = [item for index, item in enumerate(node.items) if index != position]
    if not items:
        raise CannotRewrite("a `with` needs at least one item")
    items[-1] = items[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return node.with_changes(items=items)
