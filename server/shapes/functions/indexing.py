"""Indexing by tensors: `gather`, `take_along_dim`, `index_select`, `masked_select`, `nonzero`.
(Subscripts, `x[..., None]`, are `ops.index`, applied by the interpreter.)"""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import bool_of, int_of
from torch_lsp.shapes.functions.registry import Call, method
from torch_lsp.shapes.functions.view import shaped_like_argument
from torch_lsp.shapes.layers.requirements import float_indices
from torch_lsp.shapes.ops import ONE, ShapeError
from torch_lsp.shapes.values import UNKNOWN, Tensor, Value


@method("gather", also_torch=True)
def _gather(call: Call, x: Tensor) -> Value:
    problem = float_indices(f"`{call.site.callee}`", call.arg(1, "index"))
    if problem is not None:
        call.fail(problem, "dtype")
        return UNKNOWN
    return shaped_like_argument(call, x, 1, "index")


@method("take_along_dim", also_torch=True)
def _take_along_dim(call: Call, x: Tensor) -> Value:
    index = call.arg(0, "indices")
    if not isinstance(index, Tensor) or call.arg(1, "dim") is None:
        return UNKNOWN
    try:
        return ops.broadcast([x, index], call.origin()).with_dims(index.dims if index.rank == x.rank else
                                                                  ops.broadcast([x, index]).dims, dtype=x.dtype)
    except ShapeError:
        return UNKNOWN


@method("index_select", also_torch=True)
def _index_select(call: Call, x: Tensor) -> Value:
    dim, index = int_of(call.arg(0, "dim")), call.arg(1, "index")
    problem = float_indices(f"`{call.site.callee}`", index)
    if problem is not None:
        call.fail(problem, "dtype")
        return UNKNOWN
    if dim is None or not isinstance(index, Tensor) or index.rank not in (0, 1):
        return UNKNOWN
    size = index.dims[0] if index.rank == 1 else ONE
    return ops.resize_dim(x, dim, size, call.origin())


@method("masked_select", also_torch=True)
def _masked_select(call: Call, x: Tensor) -> Value:
    return Tensor((None,), False, x.dtype, call.origin())


@method("nonzero", "argwhere", also_torch=True)
def _nonzero(call: Call, x: Tensor) -> Value:
    if bool_of(call.kwargs.get("as_tuple")):
        return UNKNOWN
    rank = Dim.const(x.rank) if x.rank is not None else None
    return Tensor((None, rank), False, "long", call.origin())
