"""Joining tensors (`torch.cat`, `torch.stack`) and cutting them apart (`split`, `chunk`, `unbind`)."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import dim_of, int_of, items_of, tensor_of
from torch_lsp.shapes.functions.registry import TORCH, Call, function, method
from torch_lsp.shapes.ops import ShapeError, describe
from torch_lsp.shapes.values import UNKNOWN, Int, ListValue, Tensor, TupleValue, Value

def _tensor_list(value: Value | None) -> tuple[list[Tensor], Dim | None] | None:
    """The tensors of a list/tuple argument and how many there are (None when not known)."""
    if isinstance(value, (TupleValue,)) or (isinstance(value, ListValue) and value.exact):
        items = items_of(value) or []
        tensors = [tensor_of(v) if isinstance(v, Tensor) else None for v in items]
        if any(t is None for t in tensors) or not tensors:
            return None
        return tensors, Dim.const(len(tensors))  # type: ignore[return-value]
    if isinstance(value, ListValue) and isinstance(value.element, Tensor):
        return [value.element], None
    return None


def _joined(call: Call) -> tuple[list[Tensor], Dim | None, int] | None:
    """`torch.cat(tensors, dim)` / `torch.stack(tensors, dim)`: the tensors, how many, and the dim."""
    found = _tensor_list(call.arg(0, "tensors"))
    dim = int_of(call.arg(1, "dim", Int(Dim())))
    if found is None or dim is None:
        return None
    return found[0], found[1], dim


@function("cat", "concat", "concatenate", within=(TORCH,))
def _cat(call: Call) -> Value:
    joined = _joined(call)
    if joined is None:
        return UNKNOWN
    tensors, count, dim = joined
    if count is None:  # some tensors of this shape: the joined dim is unknown
        result = ops.resize_dim(tensors[0], dim, None, call.origin())
        return result if result.has_shape else UNKNOWN
    try:
        return ops.cat(tensors, dim, call.origin())
    except ShapeError:
        call.fail(f"`{call.site.callee}` joins tensors whose other dims differ: "
                  + ", ".join(describe(t) for t in tensors))
        return UNKNOWN


@function("stack", within=(TORCH,))
def _stack(call: Call) -> Value:
    joined = _joined(call)
    if joined is None:
        return UNKNOWN
    tensors, count, dim = joined
    try:
        return ops.stack(tensors, dim, count, call.origin())
    except ShapeError:
        call.fail(f"`{call.site.callee}` stacks tensors of different shapes: " + ", ".join(describe(t) for t in tensors))
        return UNKNOWN


@method("split", also_torch=True)
def _split(call: Call, x: Tensor) -> Value:
    dim = int_of(call.arg(1, "dim", Int(Dim())))
    split = call.arg(0, "split_size")
    if "split_size_or_sections" in call.kwargs:
        split = call.kwargs["split_size_or_sections"]
    if dim is None or split is None:
        return UNKNOWN
    return split_of(call, x, split, dim)


def split_of(call: Call, x: Tensor, split: Value, dim: int) -> Value:
    size = x.dim(dim)
    sections = items_of(split)
    if sections is not None:
        sizes = [dim_of(v) for v in sections]
        parts = [ops.resize_dim(x, dim, s, call.origin()) for s in sizes]
        return TupleValue(tuple(parts)) if all(p.has_shape for p in parts) else UNKNOWN
    step = dim_of(split)
    if step is None:
        return UNKNOWN
    sizes = ops.split_sizes(size, step)
    return _pieces(call, x, dim, sizes)


@method("chunk", also_torch=True)
def _chunk(call: Call, x: Tensor) -> Value:
    chunks, dim = int_of(call.arg(0, "chunks")), int_of(call.arg(1, "dim", Int(Dim())))
    if chunks is None or dim is None:
        return UNKNOWN
    sizes = ops.chunk_sizes(x.dim(dim), chunks)
    return _pieces(call, x, dim, sizes)


@method("unbind", also_torch=True)
def _unbind(call: Call, x: Tensor) -> Value:
    dim = int_of(call.arg(0, "dim", Int(Dim())))
    if dim is None:
        return UNKNOWN
    part = ops.reduce(x, [dim], False, call.origin())
    if not part.has_shape:
        return UNKNOWN
    count = ops.concrete(x.dim(dim))
    if count is not None and count <= ops.MAX_UNBIND:
        return TupleValue((part,) * count)
    return ListValue([], exact=False, kind="tuple", element=part)


def _pieces(call: Call, x: Tensor, dim: int, sizes: list[Dim] | None) -> Value:
    """`x` cut along `dim` into pieces of these sizes; some pieces of unknown size when None."""
    if sizes is None:
        part = ops.resize_dim(x, dim, None, call.origin())
        return ListValue([], exact=False, kind="tuple", element=part) if part.has_shape else UNKNOWN
    result = ops.pieces(x, dim, sizes, call.origin())
    return result if result is not None else UNKNOWN
