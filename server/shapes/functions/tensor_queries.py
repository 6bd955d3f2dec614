"""What a tensor says about itself: `x.size()`, `x.dim()`, `x.numel()`, `x.item()`, and
methods whose result is no tensor (`x.tolist()`, `x.backward()`)."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import int_of
from torch_lsp.shapes.functions.registry import Call, method
from torch_lsp.shapes.values import NONE, NUM, UNKNOWN, Int, SizeOf, Tensor, Value


@method("size")
def _size(call: Call, x: Tensor) -> Value:
    dim = call.arg(0, "dim")
    if dim is None:
        return SizeOf(x, x)
    index = int_of(dim)
    if index is None:
        return Int(None)
    return Int(x.dim(index))


@method("dim", "ndimension")
def _rank(call: Call, x: Tensor) -> Value:
    return Int(Dim.const(x.rank)) if x.rank is not None else Int(None)


@method("numel", "nelement")
def _numel(call: Call, x: Tensor) -> Value:
    return Int(ops.numel(x))


@method("item")
def _item(call: Call, x: Tensor) -> Value:
    return Int(None) if x.dtype == "long" else NUM


@method("tolist", "numpy", "storage", "untyped_storage", "data_ptr", "element_size", "stride", "get_device",
        "register_hook", "is_contiguous", "equal", "allclose")
def _opaque_result(call: Call, x: Tensor) -> Value:
    return UNKNOWN


@method("backward")
def _backward(call: Call, x: Tensor) -> Value:
    return NONE

