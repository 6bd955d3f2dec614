"""Rules that rearrange a tensor's dims: view/reshape, flatten, permute/transpose, squeeze,
expand/repeat, narrow/select/unfold."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import dim_of, dims_list, dtype_of, int_of, items_of, sizes_from
from torch_lsp.shapes.functions.registry import Call, method
from torch_lsp.shapes.layers.requirements import dim_rejected, flatten_rejected
from torch_lsp.shapes.ops import ONE, WILDCARD, ShapeError, describe
from torch_lsp.shapes.values import NONE, UNKNOWN, Int, Tensor, Value


def _sizes_args(call: Call) -> list | None:
    if "size" in call.kwargs or "shape" in call.kwargs:
        return sizes_from([call.kwargs.get("size") or call.kwargs.get("shape")])
    if not call.args or call.kwargs:
        return None
    return sizes_from(call.args)


@method("reshape", also_torch=True)
@method("view")
def _view(call: Call, x: Tensor) -> Value:
    if len(call.args) == 1 and dtype_of(call.args[0]) is not None:
        return UNKNOWN  # `x.view(torch.uint8)` reinterprets the bytes
    sizes = _sizes_args(call)
    if sizes is None:
        return UNKNOWN
    try:
        return ops.view(x, sizes, call.origin())
    except ShapeError:
        shown = "[" + ", ".join("-1" if s == WILDCARD else ("?" if s is None else s.render()) for s in sizes) + "]"
        call.fail(f"`{call.site.callee}` reshapes {describe(x)} ({ops.numel(x).render()} elements) to {shown}, "
                  "which holds a different number of elements")
        return UNKNOWN


def shaped_like_argument(call: Call, x: Tensor, position: int, name: str) -> Value:
    """`x`'s values in the shape of another tensor argument (`view_as(other)`, `gather(dim, index)`)."""
    other = call.arg(position, name)
    if not isinstance(other, Tensor):
        return UNKNOWN
    return other.with_dims(other.dims, dtype=x.dtype, origin=call.origin())


@method("view_as", "reshape_as", "expand_as")
def _view_as(call: Call, x: Tensor) -> Value:
    return shaped_like_argument(call, x, 0, "other")


@method("flatten", also_torch=True)
def _flatten(call: Call, x: Tensor) -> Value:
    start, end = int_of(call.arg(0, "start_dim", Int(Dim.const(0)))), int_of(call.arg(1, "end_dim", Int(Dim.const(-1))))
    if start is None or end is None or flatten_rejected(call.site, f"`{call.site.callee}`", x, start, end):
        return UNKNOWN
    return ops.flatten(x, start, end, call.origin())


@method("unflatten", also_torch=True)
def _unflatten(call: Call, x: Tensor) -> Value:
    dim, sizes = int_of(call.arg(0, "dim")), sizes_from([call.arg(1, "sizes") or UNKNOWN])
    if dim is None or sizes is None:
        return UNKNOWN
    return ops.unflatten(x, dim, sizes, call.origin())


@method("permute", also_torch=True)
def _permute(call: Call, x: Tensor) -> Value:
    values = call.args if len(call.args) != 1 else (items_of(call.args[0]) or call.args)
    if "dims" in call.kwargs:
        values = items_of(call.kwargs["dims"]) or []
    order = [int_of(v) for v in values]
    if not order or None in order:
        return UNKNOWN
    return ops.permute(x, order, call.origin())  # type: ignore[arg-type]


@method("transpose", "swapaxes", "swapdims", also_torch=True)
def _transpose(call: Call, x: Tensor) -> Value:
    first, second = int_of(call.arg(0, "dim0")), int_of(call.arg(1, "dim1"))
    if first is None or second is None:
        return UNKNOWN
    what = f"`{call.site.callee}`"
    if dim_rejected(call.site, what, x, first) or dim_rejected(call.site, what, x, second):
        return UNKNOWN
    return ops.transpose(x, first, second, call.origin())


@method("t", also_torch=True)
def _t(call: Call, x: Tensor) -> Value:
    if x.rank is not None and x.rank < 2:
        return x
    if x.rank == 2 or (x.rank is None and len(x.dims) == 2):
        return Tensor((x.dims[-1], x.dims[-2]), False, x.dtype, call.origin())
    return UNKNOWN


@method("movedim", "moveaxis", also_torch=True)
def _movedim(call: Call, x: Tensor) -> Value:
    source, destination = dims_list(call.arg(0, "source")), dims_list(call.arg(1, "destination"))
    if source is None or destination is None:
        return UNKNOWN
    return ops.movedim(x, source, destination, call.origin())


@method("squeeze", also_torch=True)
def _squeeze(call: Call, x: Tensor) -> Value:
    dim = call.arg(0, "dim")
    if dim is None:
        return ops.squeeze(x, None, call.origin())
    dims = dims_list(dim)
    return ops.squeeze(x, dims, call.origin()) if dims is not None else UNKNOWN


@method("unsqueeze", also_torch=True)
def _unsqueeze(call: Call, x: Tensor) -> Value:
    dim = int_of(call.arg(0, "dim"))
    if dim is None or dim_rejected(call.site, f"`{call.site.callee}`", x, dim, extra=1):
        return UNKNOWN
    return ops.unsqueeze(x, dim, call.origin())


@method("expand")
def _expand(call: Call, x: Tensor) -> Value:
    sizes = _sizes_args(call)
    if sizes is None:
        return UNKNOWN
    try:
        return ops.expand(x, sizes, call.origin())
    except ShapeError:
        call.fail(f"`{call.site.callee}` expands {describe(x)} to a size that differs from a non-1 dim")
        return UNKNOWN


@method("repeat")
def _repeat(call: Call, x: Tensor) -> Value:
    sizes = _sizes_args(call)
    if sizes is None or WILDCARD in sizes:
        return UNKNOWN
    return ops.repeat(x, sizes, call.origin())


@method("repeat_interleave", also_torch=True)
def _repeat_interleave(call: Call, x: Tensor) -> Value:
    repeats, dim = dim_of(call.arg(0, "repeats")), call.arg(1, "dim")
    if repeats is None:
        return UNKNOWN
    if dim is None or dim is NONE:
        total = ops.numel(x)
        return Tensor((total * repeats if total is not None else None,), False, x.dtype, call.origin())
    index = int_of(dim)
    if index is None:
        return UNKNOWN
    size = x.dim(index)
    return ops.resize_dim(x, index, size * repeats if size is not None else None, call.origin())


@method("narrow", also_torch=True)
def _narrow(call: Call, x: Tensor) -> Value:
    dim, length = int_of(call.arg(0, "dim")), dim_of(call.arg(2, "length"))
    return ops.resize_dim(x, dim, length, call.origin()) if dim is not None else UNKNOWN


@method("select", also_torch=True)
def _select(call: Call, x: Tensor) -> Value:
    dim = int_of(call.arg(0, "dim"))
    if dim is None:
        return UNKNOWN
    reduced = ops.reduce(x, [dim], False, call.origin())
    return reduced


@method("unfold")
def _unfold(call: Call, x: Tensor) -> Value:
    dim, size, step = int_of(call.arg(0, "dimension")), dim_of(call.arg(1, "size")), dim_of(call.arg(2, "step"))
    if dim is None or size is None or step is None:
        return UNKNOWN
    old = x.dim(dim)
    count = (old - size).floordiv(step) + ONE if old is not None and (old - size).floordiv(step) is not None else None
    resized = ops.resize_dim(x, dim, count, call.origin())
    return Tensor(resized.dims + (size,), resized.variadic, x.dtype, call.origin()) if resized.has_shape else UNKNOWN
