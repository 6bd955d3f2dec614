"""What a transposing expression is, as TL203 reads it: `x.transpose(1, 2)`, `x.permute(...)`,
`x.t()`, `x.T`, `x.mT`, `torch.movedim(x, ...)`, ...: which tensor it reorders and the new
order of its dims (`permutation`).  Pure syntax plus the call's qualified name; the rank,
where a permutation needs it, comes from the shape pass.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.syntax_nodes import dotted, int_constant

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

TRANSPOSING_METHODS = {"transpose", "swapaxes", "swapdims", "permute", "t", "movedim", "moveaxis"}
TRANSPOSING_FUNCTIONS = {
    "torch.transpose", "torch.swapaxes", "torch.swapdims", "torch.permute", "torch.t", "torch.movedim",
    "torch.moveaxis",
}
TRANSPOSING_ATTRIBUTES = {"T", "mT", "H", "mH"}


def looks_like_dtype(analysis: "Analysis", expr: ast.AST) -> bool:
    """`torch.float16`, `np.uint8`, `dtype`, `self.dtype`: the argument of a dtype `view`."""
    qualname = analysis.qualname(expr) or ""
    if qualname.startswith(("torch.", "numpy.")):
        return True
    name = dotted(expr) or ""
    return "dtype" in name.rsplit(".", 1)[-1].lower()


def is_transposing(analysis: "Analysis", expr: ast.AST) -> bool:
    """`x.transpose(...)`, `x.permute(...)`, `x.t()`, `x.T`, `torch.movedim(x, ...)`, ..."""
    if isinstance(expr, ast.Attribute):
        return expr.attr in TRANSPOSING_ATTRIBUTES
    if not isinstance(expr, ast.Call):
        return False
    qualname = analysis.call_qualname(expr)
    if qualname in TRANSPOSING_FUNCTIONS:
        return True
    func = expr.func
    if qualname is not None or not isinstance(func, ast.Attribute) or func.attr not in TRANSPOSING_METHODS:
        return False
    if isinstance(func.value, ast.Name) and func.value.id == "self":
        return False  # `self.t(x)`: a submodule named like a tensor method
    arity = len(expr.args) + len(expr.keywords)
    return {"t": arity == 0, "permute": arity >= 1}.get(func.attr, arity == 2)


def transposed_tensor(analysis: "Analysis", expr: ast.AST) -> ast.AST | None:
    """The tensor a transposing expression reorders (`x` in `x.transpose(1, 2)`)."""
    if isinstance(expr, ast.Attribute):
        return expr.value
    if analysis.call_qualname(expr) in TRANSPOSING_FUNCTIONS:
        return expr.args[0] if expr.args else None
    return expr.func.value


def _transpose_args(analysis: "Analysis", expr: ast.AST) -> tuple[str, list[ast.AST]] | None:
    """(operation, its dim arguments) for a transposing expression."""
    if isinstance(expr, ast.Attribute):
        return expr.attr, []
    if expr.keywords:
        return None
    if analysis.call_qualname(expr) in TRANSPOSING_FUNCTIONS:
        return analysis.call_qualname(expr).rsplit(".", 1)[1], list(expr.args[1:])
    return expr.func.attr, list(expr.args)


def permutation(analysis: "Analysis", expr: ast.AST, rank: int | None) -> tuple[int, ...] | None:
    """New order of the old dims (`(0, 2, 1)` for `transpose(1, 2)` of a 3-D tensor), or None.

    Without a known rank only `t()` (2-D) and `permute(...)` (which spells the rank) are known.
    """
    parsed = _transpose_args(analysis, expr)
    if parsed is None:
        return None
    operation, args = parsed
    if operation == "permute":
        if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)):
            args = args[0].elts
        order = [int_constant(a) for a in args]
        if not order or None in order:
            return None
        n = len(order)
        order = [o + n if o < 0 else o for o in order]
        return tuple(order) if sorted(order) == list(range(n)) else None
    if operation == "t" and not args:
        return (1, 0) if rank in (None, 2) else None
    if operation in ("T", "H") and rank is not None:
        return tuple(reversed(range(rank)))
    if operation in ("T", "H"):
        return (1, 0)
    if operation in ("mT", "mH"):
        return None if rank is None or rank < 2 else tuple(range(rank - 2)) + (rank - 1, rank - 2)
    if len(args) != 2 or rank is None:
        return None
    first, second = (int_constant(a) for a in args)
    if first is None or second is None or not (-rank <= first < rank and -rank <= second < rank):
        return None
    first, second = first % rank, second % rank
    order = list(range(rank))
    if operation in ("transpose", "swapaxes", "swapdims"):
        order[first], order[second] = order[second], order[first]
    else:  # movedim(source, destination)
        order.remove(first)
        order.insert(second, first)
    return tuple(order)


def is_identity_transpose(analysis: "Analysis", expr: ast.AST) -> bool:
    """`transpose(1, 1)`, `permute(0, 1, 2)`, `movedim(0, 0)`: no reordering at all."""
    parsed = _transpose_args(analysis, expr)
    if parsed is None:
        return False
    operation, args = parsed
    if operation == "permute":
        order = permutation(analysis, expr, None)
        return order is not None and order == tuple(range(len(order)))
    if len(args) == 2:
        first, second = (int_constant(a) for a in args)
        return first is not None and first == second
    return False
