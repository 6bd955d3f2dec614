"""Fixes for TL1xx, the training loop: clear gradients, switch modes, guard in-place
updates, use the device variable, pass `device=`, order the steps."""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from server.analysis import argument, keyword
from server.codeactions import calls
from server.codeactions.imports import use_module
from server.codeactions.locate import call_at, keyword_at, loop_at, on_lines_of_its_own, statement_at, text_of
from server.codeactions.names import bound_in, bound_in_loop, contains, root_name
from server.codeactions.registry import FixOffer, fixer, importing, offer
from server.codeactions.rewrite import Rewrite

if TYPE_CHECKING:
    from server.analysis import Analysis, LoopInfo
    from server.diagnostics.base import Finding


# ------------------------------------------------------------------- TL101
@fixer("TL101", data=("optimizer",))
def insert_zero_grad(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    loop = loop_at(analysis, finding)
    optimizer = finding.data.get("optimizer")
    if loop is None or not optimizer or not _is_expression(optimizer):
        return []
    # The optimizer must be the same object at the top of the body as where it steps.
    if root_name(ast.parse(optimizer, mode="eval").body) in bound_in_loop(loop.node):
        return []
    text = f"{optimizer}.zero_grad(set_to_none=True)"
    return [offer(analysis, finding, f"Insert `{text}` at the top of the loop",
                  lambda rw: rw.insert_first(loop.node, text + "\n"))]


# ------------------------------------------------------------------- TL102
@fixer("TL102", data=("model", "inside_epoch"))
def insert_train(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    loop = loop_at(analysis, finding)
    model = finding.data.get("model")
    if loop is None or not model:
        return []
    text = f"{model}.train()"
    epoch = _evaluating_epoch_loop(analysis, loop, model) if finding.data.get("inside_epoch") else None
    if epoch is not None:
        return [offer(analysis, finding, f"Insert `{text}` at the top of the epoch loop",
                      lambda rw: rw.insert_first(epoch.node, text + "\n"))]
    return [offer(analysis, finding, f"Insert `{text}` before the loop",
                  lambda rw: rw.insert_before(loop.node, text + "\n"))]


def _evaluating_epoch_loop(analysis: "Analysis", loop: "LoopInfo", model: str) -> "LoopInfo | None":
    """The enclosing loop that evaluates `model`, when the top of its body is a right place for
    `model.train()`: every evaluation in it comes after the training loop, and it does not rebind
    the model.  Otherwise None (the statement goes just before the training loop)."""
    from server.diagnostics.training import MissingTrainMode

    rule = MissingTrainMode()
    ancestor = loop.parent
    while ancestor is not None:
        evaluations = [c for c in ancestor.calls if rule._evaluates(analysis, c, model)]
        if evaluations:
            after = all(c.lineno > loop.node.end_lineno for c in evaluations)
            return ancestor if after and model not in bound_in_loop(ancestor.node) else None
        ancestor = ancestor.parent
    return None


# ------------------------------------------------------------------- TL103
@fixer("TL103", data=("model",))
def insert_eval(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    if call is None:
        return []
    model = finding.data.get("model") or analysis.roles_for(call).model_name(call)
    anchor = analysis.statement_of(call)
    if not model or anchor is None:
        return []
    where = "before this statement"
    for loop in reversed(analysis.context(call).loops):
        if model in bound_in_loop(loop.node):
            break
        anchor, where = loop.node, "before the loop"
    text = f"{model}.eval()"
    return [offer(analysis, finding, f"Insert `{text}` {where}", lambda rw: rw.insert_before(anchor, text + "\n"))]


# ------------------------------------------------------------------- TL104
@fixer("TL104")
def wrap_in_no_grad(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    stmt = statement_at(analysis, finding)
    if stmt is None or isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []
    if not on_lines_of_its_own(analysis, stmt):
        return []

    def plan(rw: Rewrite) -> None:
        torch = use_module(rw, "torch", stmt)
        rw.wrap([stmt], f"with {torch}.no_grad()")

    title = "Wrap the statement in `with torch.no_grad():`" + importing(analysis, "torch", stmt)
    return [offer(analysis, finding, title, plan)]


# ------------------------------------------------------------------- TL105
@fixer("TL105", data=("device", "form"))
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
        return [offer(analysis, finding, f"Replace `{shown}` with `.to({device})`",
                      lambda rw: rw.change_call(call, lambda node: calls.cuda_to_device(node, device)))]
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


# ------------------------------------------------------------------- TL106
@fixer("TL106", data=("input",))
def add_device_keyword(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    source = finding.data.get("input")
    if call is None or not source or keyword(call, "device") is not None:
        return []
    value = f"{source}.device"
    return [offer(analysis, finding, f"Add `device={value}`",
                  lambda rw: rw.change_call(call, lambda node: calls.add_keyword(node, "device", value)))]


# ------------------------------------------------------------------- TL108
@fixer("TL108")
def step_scheduler_after_optimizer(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    call = call_at(analysis, finding)
    stmt = analysis.statement_of(call) if call is not None else None
    if not (isinstance(stmt, ast.Expr) and stmt.value is call):
        return []
    step = _first_optimizer_step(analysis, call)
    moved = _movable_unit(analysis, stmt, step) if step is not None else None
    anchor = _later_sibling_holding(analysis, moved, step) if moved is not None else None
    scheduler = root_name(call.func)
    if anchor is None or scheduler is None or not on_lines_of_its_own(analysis, moved):
        return []
    if not on_lines_of_its_own(analysis, anchor):
        return []
    between = _statements_between(analysis, moved, anchor)
    if any(scheduler in _names(s) for s in between):
        return []  # something between reads the scheduler (the learning rate it logs would change)
    if moved is not stmt and _names(moved.test) & bound_in(between):
        return []  # the guard's value may change on the way
    step_text, optimizer_text = text_of(analysis, call), text_of(analysis, step)
    return [offer(analysis, finding, f"Move `{step_text}` after `{optimizer_text}`",
                  lambda rw: rw.move(moved, anchor, "after"))]


def _movable_unit(analysis: "Analysis", stmt: ast.stmt, step: ast.Call) -> ast.stmt | None:
    """The statement to move: the scheduler step itself when the optimizer step is in a later
    statement of the same block; else the `if` around it when that `if` only steps schedulers
    (`if epoch == 0: warmup.step()`), has no `else` and a test without calls."""
    if _later_sibling_holding(analysis, stmt, step) is not None:
        return stmt
    guard = analysis.parents.get(stmt)
    roles = analysis.roles_for(stmt)
    if not isinstance(guard, ast.If) or guard.orelse or any(isinstance(n, ast.Call) for n in ast.walk(guard.test)):
        return None
    for inner in guard.body:
        if not (isinstance(inner, ast.Expr) and isinstance(inner.value, ast.Call) and roles.is_scheduler_step(inner.value)):
            return None
    return guard


def _later_sibling_holding(analysis: "Analysis", stmt: ast.stmt, node: ast.AST) -> ast.stmt | None:
    """The statement after `stmt` in its block that holds `node`."""
    block = analysis.block_of(stmt)
    if block is None:
        return None
    for sibling in block[block.index(stmt) + 1:]:
        if contains(sibling, node):
            return sibling
    return None


def _first_optimizer_step(analysis: "Analysis", call: ast.Call) -> ast.Call | None:
    loop = analysis.context(call).loop
    roles = analysis.roles_for(call)
    if loop is None:
        return None
    steps = [c for c in loop.calls if roles.is_optimizer_step(c)]
    return min(steps, key=lambda c: (c.lineno, c.col_offset)) if steps else None


def _statements_between(analysis: "Analysis", first: ast.stmt, last: ast.stmt) -> list[ast.stmt]:
    block = analysis.block_of(first) or []
    return block[block.index(first) + 1: block.index(last)]


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _is_expression(text: str) -> bool:
    try:
        ast.parse(text, mode="eval")
    except SyntaxError:
        return False
    return True

