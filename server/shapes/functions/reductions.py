"""Reductions over dims: `sum`/`mean`/`all`/`argmax`, `std`/`var`, `norm`, `max`/`min` (values and
indices), `topk`, `kthvalue`, `sort`."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import bool_of, dim_of, dims_list, int_of
from torch_lsp.shapes.functions.elementwise import binary
from torch_lsp.shapes.functions.registry import Call, method
from torch_lsp.shapes.layers.requirements import dim_rejected
from torch_lsp.shapes.values import NONE, UNKNOWN, Bool, Int, Tensor, TupleValue, Value


def _reduction(dtype: str | None = "keep"):
    def rule(call: Call, x: Tensor) -> Value:
        dim = call.arg(0, "dim")
        keepdim = bool_of(_keepdim_keyword(call, call.args[1] if len(call.args) > 1 and isinstance(call.args[1], Bool)
                                           else None))
        if keepdim is None:
            return UNKNOWN
        if dim is None or dim is NONE:
            return ops.reduce(x, None, keepdim, call.origin(), dtype)
        dims = dims_list(dim)
        if dims is not None and any(dim_rejected(call.site, f"`{call.site.callee}`", x, d) for d in dims):
            return UNKNOWN
        return ops.reduce(x, dims, keepdim, call.origin(), dtype) if dims is not None else UNKNOWN
    return rule


def _keepdim_keyword(call: Call, positional: Value | None = None) -> Value | None:
    """`keepdim=`, or NumPy's `keepdims=` that torch also accepts (`x.sum(axis=1, keepdims=True)`);
    else `positional`.  Read as neither, `keepdims=True` would drop the dim it keeps."""
    return call.kwargs.get("keepdim", call.kwargs.get("keepdims", positional))


method("sum", "mean", "prod", "amax", "amin", "logsumexp", "nansum", "nanmean", "count_nonzero",
       also_torch=True)(_reduction())
method("all", "any", also_torch=True)(_reduction("bool"))
method("argmax", "argmin", also_torch=True)(_reduction("long"))


@method("std", "var", also_torch=True)
def _spread(call: Call, x: Tensor) -> Value:
    """`x.std()`, `x.std(unbiased)`, `x.std(dim, keepdim=...)`: the old positional forms are ambiguous."""
    dim = call.arg(0, "dim")
    if isinstance(dim, Bool):  # `x.std(False)`: unbiased, over every element
        return ops.reduce(x, None, False, call.origin())
    keepdim = bool_of(_keepdim_keyword(call))
    if len(call.args) > 1 or keepdim is None:
        return UNKNOWN
    if dim is None or dim is NONE:
        return ops.reduce(x, None, keepdim, call.origin())
    dims = dims_list(dim)
    return ops.reduce(x, dims, keepdim, call.origin()) if dims is not None else UNKNOWN


@method("norm", also_torch=True)
def _norm(call: Call, x: Tensor) -> Value:
    dim = call.arg(1, "dim")
    keepdim = bool_of(call.arg(2, "keepdim"))
    if keepdim is None:
        return UNKNOWN
    if dim is None or dim is NONE:
        return ops.reduce(x, None, keepdim, call.origin())
    dims = dims_list(dim)
    return ops.reduce(x, dims, keepdim, call.origin()) if dims is not None else UNKNOWN


@method("max", "min", "median", "mode", also_torch=True)
@method("nanmedian")
def _extreme(call: Call, x: Tensor) -> Value:
    first = call.arg(0, "dim")
    if isinstance(first, Tensor):
        other = binary("keep")
        return other(call, x)
    if first is None:
        return ops.reduce(x, None, False, call.origin())
    dim = int_of(first)
    keepdim = bool_of(call.arg(1, "keepdim"))
    if dim is None or keepdim is None or dim_rejected(call.site, f"`{call.site.callee}`", x, dim):
        return UNKNOWN
    values = ops.reduce(x, [dim], keepdim, call.origin())
    indices = values.with_dims(values.dims, dtype="long")
    return TupleValue((values, indices), ("values", "indices"))


@method("kthvalue", also_torch=True)
def _kthvalue(call: Call, x: Tensor) -> Value:
    dim, keepdim = int_of(call.arg(1, "dim", Int(Dim.const(-1)))), bool_of(call.arg(2, "keepdim"))
    if dim is None or keepdim is None:
        return UNKNOWN
    values = ops.reduce(x, [dim], keepdim, call.origin())
    return TupleValue((values, values.with_dims(values.dims, dtype="long")), ("values", "indices"))


@method("topk", also_torch=True)
def _topk(call: Call, x: Tensor) -> Value:
    k, dim = dim_of(call.arg(0, "k")), int_of(call.arg(1, "dim", Int(Dim.const(-1))))
    if dim is None:
        return UNKNOWN
    values = ops.resize_dim(x, dim, k, call.origin())
    return TupleValue((values, values.with_dims(values.dims, dtype="long")), ("values", "indices"))


@method("sort", also_torch=True)
def _sort(call: Call, x: Tensor) -> Value:
    return TupleValue((x, x.with_dims(x.dims, dtype="long")), ("values", "indices"))


@method("argsort", also_torch=True)
def _argsort(call: Call, x: Tensor) -> Value:
    return x.with_dims(x.dims, dtype="long")


@method("cummax", "cummin", also_torch=True)
def _cumulative_pair(call: Call, x: Tensor) -> Value:
    return TupleValue((x, x.with_dims(x.dims, dtype="long")), ("values", "indices"))
