"""TL301: stop keeping every iteration's autograd graph alive.

- `losses.append(loss)` -> `losses.append(loss.detach())` (safe, preferred); for a scalar
  such as a loss, also `losses.append(loss.item())` as a second, explicit action (unsafe:
  the list then holds floats, so code that stacks it changes).
- `outputs.extend(logits)` -> `outputs.extend(logits.detach())` (safe).
- `total += loss` / `total = total + loss` -> `loss.item()` when the total starts as a
  Python number and is used only as one, in code that does not run on a GPU; otherwise
  `loss.detach()`, which keeps the running total a tensor exactly as before, minus the
  graph (on a GPU, `.item()` would wait for the device every step: the sync TL401
  reports).  The other form is offered as the second action.

`.item()` needs a one-element tensor, so it is only offered for a loss value or a full
reduction (`.sum()`, `.mean()` without arguments).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

import libcst as cst

from torch_lsp.codeactions import calls
from torch_lsp.codeactions.locate import statement_at, text_of
from torch_lsp.codeactions.registry import SAFE, UNSAFE, FixOffer, fixer, offer
from torch_lsp.codeactions.rewrite import Rewrite
from torch_lsp.syntax_nodes import accumulation, running_sum

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding

_REDUCTIONS = {"sum", "mean", "max", "min", "norm", "prod", "item"}


@fixer("TL301")
def detach_accumulated(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    stmt = statement_at(analysis, finding)
    found = accumulation(stmt) if stmt is not None else None
    if found is None:
        return []
    container, value, kind = found
    text = text_of(analysis, value, 40)
    shown = text if isinstance(value, (ast.Name, ast.Attribute, ast.Call, ast.Subscript)) else f"({text})"
    scalar = _is_scalar(analysis, value, stmt)
    detach = _method_plan(stmt, "detach")
    item = _method_plan(stmt, "item")
    if kind == "extend":
        return [offer(analysis, finding, f"Detach `{text}` before extending", detach)]
    if kind == "append":
        offers = [offer(analysis, finding, f"Detach `{text}` before appending", detach)]
        if scalar:
            offers.append(offer(analysis, finding, f"Append `{shown}.item()` instead", item, UNSAFE, preferred=False))
        return offers
    use_item = scalar and _number_total(analysis, container, stmt) and not analysis.moves_to_accelerator()
    item_offer = lambda safety, preferred: offer(  # noqa: E731 - two call sites, one shape
        analysis, finding, f"Use `{shown}.item()` in the running sum", item, safety, preferred)
    detach_offer = lambda preferred: offer(  # noqa: E731
        analysis, finding, f"Use `{shown}.detach()` in the running sum", detach, SAFE, preferred)
    if use_item:
        return [item_offer(SAFE, True), detach_offer(False)]
    offers = [detach_offer(True)]
    if scalar:
        offers.append(item_offer(UNSAFE, False))
    return offers


def _is_scalar(analysis: "Analysis", value: ast.AST, stmt: ast.stmt) -> bool:
    """A one-element tensor: a loss or a full reduction, maybe scaled by a number
    (`loss * x.size(0)`, `loss / accum`)."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Mult, ast.Div)):
        left, right = value.left, value.right
        return (_is_scalar(analysis, left, stmt) and _is_number(right)) or (
            isinstance(value.op, ast.Mult) and _is_number(left) and _is_scalar(analysis, right, stmt)
        )
    if analysis.roles_for(stmt).is_loss_value(value, stmt):
        return True
    return (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _REDUCTIONS
        and not value.args and not value.keywords
    )


def _is_number(expr: ast.AST) -> bool:
    """A Python number: a constant, `len(...)`, `x.size(k)`, `x.shape[k]`, `x.numel()`."""
    if isinstance(expr, ast.Constant):
        return type(expr.value) in (int, float)
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Name):
            return expr.func.id == "len"
        return isinstance(expr.func, ast.Attribute) and (
            (expr.func.attr == "size" and len(expr.args) == 1) or (expr.func.attr == "numel" and not expr.args)
        )
    return isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Attribute) and expr.value.attr == "shape"


def _number_total(analysis: "Analysis", container: ast.AST, stmt: ast.stmt) -> bool:
    """The running total starts as a Python number and is never used as a tensor (`total.item()`)."""
    if not isinstance(container, ast.Name):
        return False
    function = analysis.context(stmt).function
    roles = analysis.roles_for(function)
    starts = [a for a in roles.assignments.get(container.id, []) if a.statement is not stmt]
    first = min(starts, key=lambda a: a.order, default=None)
    value = first.value if first is not None else None
    if not (isinstance(value, ast.Constant) and type(value.value) in (int, float)):
        return False
    for node in ast.walk(function.node):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == container.id:
            return False
    return True


def _method_plan(stmt: ast.stmt, method: str):
    """Chain `.method()` onto the accumulated value of `stmt`."""
    found = accumulation(stmt)
    total = running_sum(stmt) if found is not None and isinstance(stmt, ast.Assign) else None
    value_on_right = total is not None and found[1] is total.right
    # `ema = loss if ema is None else 0.99 * ema + 0.01 * loss`: the sum is one branch of the `if`
    branch = None
    if total is not None and isinstance(stmt.value, ast.IfExp):
        branch = "body" if stmt.value.body is total else "orelse"

    def plan(rw: Rewrite) -> None:
        module = rw.ref(stmt).group.module
        rw.change_statement(stmt, lambda node: _in_branch(node, branch, method, module, value_on_right))

    return plan


def _in_branch(node: cst.CSTNode, branch: str | None, method: str, module: cst.Module,
               value_on_right: bool) -> cst.CSTNode:
    if branch is None:
        return _with_method(node, method, module, value_on_right)
    choice = node.value
    summed = node.with_changes(value=getattr(choice, branch))
    changed = _with_method(summed, method, module, value_on_right).value
    return node.with_changes(value=choice.with_changes(**{branch: changed}))


def _with_method(node: cst.CSTNode, method: str, module: cst.Module, value_on_right: bool) -> cst.CSTNode:
    if isinstance(node, cst.Expr):  # c.append(v), c.extend(v)
        call = node.value
        arg = call.args[0]
        return node.with_changes(value=call.with_changes(args=[arg.with_changes(value=calls.chained(arg.value, method))]))
    if isinstance(node, cst.AugAssign):
        return node.with_changes(value=calls.chained(node.value, method, module=module))
    binary = node.value  # `total = total + v`, `ema = 0.9 * ema + v`, `total = v + total`
    if value_on_right:
        return node.with_changes(value=binary.with_changes(right=calls.chained(binary.right, method, module=module)))
    return node.with_changes(value=binary.with_changes(left=calls.chained(binary.left, method, module=module)))
