"""TL707 numerics: `log(1 + x)`, `exp(x) - 1`, `log(sum(exp(x), dim))` and `a / sqrt(b)` have
dedicated, more accurate (or cheaper) torch functions."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.replacements import Plan, segment, span_of, spelled
from torch_lsp.diagnostics.api.uses import calls_of
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.roles import dominates, reaching_assignment
from torch_lsp.syntax_nodes import argument, has_star_args, is_none, walk_nodes

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@dataclass(frozen=True)
class NumericRewrite:
    node: ast.AST  # what the finding spans
    written: str  # `torch.log(1 + x)` as the message quotes the pattern
    better: str  # `torch.log1p(x)`
    why: str
    gain: str  # what the dedicated function does better
    plan: Plan | None


def numeric_rewrites(analysis: "Analysis") -> list[NumericRewrite]:
    found = [*_log1p(analysis), *_expm1(analysis), *_logsumexp(analysis), *_rsqrt(analysis)]
    return sorted(found, key=lambda r: (r.node.lineno, r.node.col_offset))


def _plan(better: str, name: str, edits: list, package, at: ast.AST) -> Plan:
    title = f"Replace with `{better}`" if len(better) < 60 and "\n" not in better else f"Use `{name}`"
    return Plan(title, edits=edits, import_module=package, at=at)


def _is_one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


def _called(analysis: "Analysis", call: ast.Call, name: str) -> str:
    """The call's own source with the function replaced by `name` written in the file's style."""
    return name + segment(analysis, call)[len(segment(analysis, call.func)):]


def _log1p(analysis: "Analysis") -> Iterator[NumericRewrite]:
    for call in calls_of(analysis, "torch.log"):
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.BinOp):
            continue
        total = call.args[0]
        if not isinstance(total.op, ast.Add) or not (_is_one(total.left) or _is_one(total.right)):
            continue
        x = total.right if _is_one(total.left) else total.left
        name, package = spelled(analysis, "torch.log1p", call, call.func)
        better = f"{name}({segment(analysis, x)})"
        yield NumericRewrite(call, "torch.log(1 + x)", "torch.log1p(x)", "loses the digits of a small `x`",
                             "computes the same more accurately", _plan(better, name, [(span_of(call), better)], package, call))


def _expm1(analysis: "Analysis") -> Iterator[NumericRewrite]:
    for call in calls_of(analysis, "torch.exp"):
        parent = _parent(analysis, call)
        if not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Sub) and parent.left is call
                and _is_one(parent.right)) or len(call.args) != 1 or call.keywords:
            continue
        name, package = spelled(analysis, "torch.expm1", call, call.func)
        better = _called(analysis, call, name)
        yield NumericRewrite(parent, "torch.exp(x) - 1", "torch.expm1(x)", "loses the digits of a small `x`",
                             "computes the same more accurately", _plan(better, name, [(span_of(parent), better)], package, call))


def _logsumexp(analysis: "Analysis") -> Iterator[NumericRewrite]:
    for call in calls_of(analysis, "torch.log"):
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Call):
            continue
        total = call.args[0]
        summed = _summed_operand(analysis, total)
        if summed is None:
            continue
        inner, first = summed  # `first`: where `sum`'s own arguments start (after the input of `torch.sum`)
        if not isinstance(inner, ast.Call) or analysis.call_qualname(inner) != "torch.exp" or len(inner.args) != 1:
            continue
        if _shifted_by_maximum(analysis, inner.args[0]):
            continue  # `exp(x - x.max())`: the sum is stabilised by hand and cannot overflow
        dim = argument(total, first, "dim")
        if dim is None or is_none(dim):
            continue  # logsumexp needs a dim; `sum` without one reduces everything
        plan = None
        if argument(total, first + 2, "dtype") is None and not inner.keywords:
            name, package = spelled(analysis, "torch.logsumexp", call, call.func)
            rest = [segment(analysis, a) for a in total.args[first:]] + [segment(analysis, k) for k in total.keywords]
            better = f"{name}({', '.join([segment(analysis, inner.args[0]), *rest])})"
            plan = _plan(better, name, [(span_of(call), better)], package, call)
        yield NumericRewrite(call, "torch.log(torch.sum(torch.exp(x), dim))", "torch.logsumexp(x, dim)",
                             "overflows to `inf` once any `x` exceeds about 88 (float32)",
                             "subtracts the maximum first and stays finite", plan)


def _summed_operand(analysis: "Analysis", total: ast.Call) -> tuple[ast.AST, int] | None:
    """What `torch.sum(e, dim)` or the method form `e.sum(dim)` sums, with the position of
    `dim` among the call's arguments; None for any other call."""
    if has_star_args(total):
        return None
    if analysis.call_qualname(total) == "torch.sum":
        return (total.args[0], 1) if total.args else None
    if isinstance(total.func, ast.Attribute) and total.func.attr == "sum":
        return total.func.value, 0
    return None


def _shifted_by_maximum(analysis: "Analysis", exponent: ast.AST) -> bool:
    """`x - m` where `m` is a maximum: `x.max()`, `torch.max(x, 1, keepdim=True)[0]`, `x.amax(-1)`,
    or a name surely bound to one (also `m, _ = torch.max(x, dim)`); the difference itself may be
    a name surely bound to it (`shifted = x - m`, then `torch.exp(shifted)`)."""
    if isinstance(exponent, ast.Name):
        exponent = _bound_value(analysis, exponent)
    if not (isinstance(exponent, ast.BinOp) and isinstance(exponent.op, ast.Sub)):
        return False
    shift = exponent.right
    if isinstance(shift, ast.Name):
        shift = _bound_value(analysis, shift)
    return shift is not None and _is_maximum(analysis, shift)


def _bound_value(analysis: "Analysis", name: ast.Name) -> ast.AST | None:
    """The value last bound to `name` on every path here; for `m, _ = torch.max(x, dim)` the
    call itself (its first element is the values)."""
    assignment = reaching_assignment(analysis, name)
    if assignment is not None:
        return assignment.value
    assignment = analysis.roles_for(name).last_assignment(name.id, name)
    stmt = assignment.statement if assignment is not None else None
    if (assignment is None or not assignment.unpacked or not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1
            or not isinstance(stmt.targets[0], ast.Tuple) or not stmt.targets[0].elts):
        return None
    first = stmt.targets[0].elts[0]
    statement = analysis.statement_of(name)
    if not (isinstance(first, ast.Name) and first.id == name.id) or statement is None:
        return None
    return stmt.value if dominates(analysis, stmt, statement) else None


# Methods that keep a tensor's values and only change its shape or graph: a maximum stays one
# (`m.unsqueeze(dim).expand_as(x)`, subtracted from `x` to stabilise the exponentials by hand).
_VALUE_KEEPING_METHODS = {"detach", "unsqueeze", "squeeze", "expand", "expand_as", "view", "reshape",
                          "broadcast_to", "view_as", "reshape_as"}


def _is_maximum(analysis: "Analysis", node: ast.AST, depth: int = 0) -> bool:
    while True:  # `[0]`, `.values`, `.data`, `.detach()`, `.unsqueeze(dim)` keep the maximum
        if isinstance(node, ast.Subscript) or (isinstance(node, ast.Attribute) and node.attr in ("values", "data")):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _VALUE_KEEPING_METHODS:
            node = node.func.value
        else:
            break
    if isinstance(node, ast.Name) and depth < 3:  # `m, _ = torch.max(x, dim)`, then `m.unsqueeze(dim)`
        bound = _bound_value(analysis, node)
        return bound is not None and _is_maximum(analysis, bound, depth + 1)
    if not isinstance(node, ast.Call):
        return False
    qualname = analysis.call_qualname(node)
    if qualname is not None:
        return qualname in ("torch.max", "torch.amax")
    return isinstance(node.func, ast.Attribute) and node.func.attr in ("max", "amax")


def _rsqrt(analysis: "Analysis") -> Iterator[NumericRewrite]:
    for call in calls_of(analysis, "torch.sqrt"):
        parent = _parent(analysis, call)
        if not (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Div) and parent.right is call):
            continue
        if len(call.args) != 1 or call.keywords:
            continue
        name, package = spelled(analysis, "torch.rsqrt", call, call.func)
        if _is_one(parent.left):
            better = _called(analysis, call, name)
            edits = [(span_of(parent), better)]
            yield NumericRewrite(parent, "1 / torch.sqrt(b)", "torch.rsqrt(b)", "runs a square root and a division",
                                 "computes the same in one kernel", _plan(better, name, edits, package, call))
            continue
        gap_start = (parent.left.end_lineno, parent.left.end_col_offset, call.lineno, call.col_offset)
        gap = _text(analysis, gap_start)
        if gap.count("/") != 1:
            continue
        edits = [(gap_start, gap.replace("/", "*")), (span_of(call.func), name)]
        better = f"{segment(analysis, parent.left)} * {_called(analysis, call, name)}"
        # Still two kernels (`rsqrt`, then the product): what it saves is the division.
        yield NumericRewrite(parent, "a / torch.sqrt(b)", "a * torch.rsqrt(b)", "runs a square root and a division",
                             "computes the same with a multiplication in place of the slower division",
                             _plan(better, name, edits, package, call))


def _text(analysis: "Analysis", span: tuple[int, int, int, int]) -> str:
    lines = analysis.lines
    return analysis.source[lines.offset_of_ast(span[0], span[1]):lines.offset_of_ast(span[2], span[3])]


def _parent(analysis: "Analysis", node: ast.AST) -> ast.AST | None:
    stmt = analysis.statement_of(node)
    for candidate in walk_nodes(stmt) if stmt is not None else ():
        for child in ast.iter_child_nodes(candidate):
            if child is node:
                return candidate
    return None


@register
class Numerics(Rule):
    """## What it does
    Flags `torch.log(1 + x)`, `torch.exp(x) - 1`, `torch.log(torch.sum(torch.exp(x), dim))`
    and `a / torch.sqrt(b)`, for which PyTorch has dedicated functions: `torch.log1p`,
    `torch.expm1`, `torch.logsumexp` and `torch.rsqrt`. Not flagged: a sum already
    stabilised by hand, `torch.exp(x - m)` with `m` a maximum (`x.max()`,
    `torch.max(x, 1, keepdim=True)[0]`, or a name bound to one), also through a name bound to
    the difference (`shifted = x - m`), which cannot overflow.

    ## Why is this bad
    `1 + x` rounds a small `x` away before the logarithm sees it (and `exp(x) - 1`
    cancels the same digits); summing `exp(x)` overflows to `inf` for logits above about
    88 in float32, where `logsumexp` subtracts the maximum first; dividing by a square
    root costs a division where `a * rsqrt(b)` multiplies, and `1 / sqrt(b)` takes two kernels
    where `rsqrt` takes one.

    ## Example
    ```python
    log_z = torch.log(torch.sum(torch.exp(logits), dim=-1))
    ```

    ## Use instead
    ```python
    log_z = torch.logsumexp(logits, dim=-1)
    ```
    """

    code = "TL707"
    name = "numerics"
    severity = "information"
    fix_safety = "safe"
    fix_only_where_exact = True

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for rewrite in numeric_rewrites(analysis):
            yield self.finding(
                rewrite.node,
                f"`{rewrite.written}` {rewrite.why}: `{rewrite.better}` {rewrite.gain}.",
                rewrite.plan.title if rewrite.plan else None,
            )
