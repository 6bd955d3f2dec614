"""Reading the arguments of a call: abstract values as ints, dims, sizes, dtypes, tensors."""
from __future__ import annotations

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.ops import WILDCARD
from torch_lsp.shapes.values import (
    NONE, Bool, Int, ListValue, Num, Opaque, SizeOf, Str, Tensor, TorchRef, TupleValue, Value, scalar_tensor,
)

DTYPES = {
    "bool": "bool", "long": "long", "int64": "long", "int": "long", "int32": "long", "int16": "long",
    "int8": "long", "short": "long", "float": "float", "float32": "float", "float64": "float", "double": "float",
    "half": "float", "float16": "float", "bfloat16": "float",
    # legacy tensor types, `x.type(torch.LongTensor)`
    "LongTensor": "long", "IntTensor": "long", "ShortTensor": "long", "BoolTensor": "bool", "FloatTensor": "float",
    "DoubleTensor": "float", "HalfTensor": "float", "BFloat16Tensor": "float",
}


def int_of(value: Value | None) -> int | None:
    if isinstance(value, Int) and value.dim is not None:
        return value.dim.as_int()
    if isinstance(value, Bool) and value.value is not None:
        return int(value.value)
    return None


def dim_of(value: Value | None) -> Dim | None:
    if isinstance(value, Int):
        return value.dim
    if isinstance(value, Opaque):
        return value.dim
    return None


def size_of(value: Value | None):
    """One size argument: a Dim, WILDCARD for -1, or None when unknown."""
    dim = dim_of(value)
    if dim is not None and dim.as_int() == -1:
        return WILDCARD
    return dim


def items_of(value: Value | None) -> list[Value] | None:
    if isinstance(value, TupleValue):
        return list(value.items)
    if isinstance(value, ListValue) and value.exact:
        return list(value.items)
    if isinstance(value, SizeOf):
        as_tuple = value.as_tuple()
        return list(as_tuple.items) if as_tuple is not None else None
    return None


def sizes_from(values: list[Value]) -> list | None:
    """`(B, T)`, `B, T`, `x.shape`, `[B, -1]` as sizes; None when the count is unknown.  One
    parameter nothing is known about is one size (`torch.zeros(channels)`), unless its name
    says it holds several (`torch.zeros(shape)`, `x.view(view_shape)`, `torch.ones(size)`):
    then the count is unknown."""
    if len(values) == 1:
        items = items_of(values[0])
        if items is not None:
            values = items
        elif isinstance(values[0], Opaque) and _names_sizes(values[0].name):
            return None
        elif not isinstance(values[0], (Int, Opaque)):
            return None
    return [size_of(v) for v in values]


def _names_sizes(name: str) -> bool:
    """`shape`, `view_shape`, `size`, `sizes`, `dims`: a name for a tuple of sizes (but not
    `hidden_size` or `dim`, which name one)."""
    lowered = name.lower()
    return "shape" in lowered or lowered in ("size", "sizes", "dims", "dimensions") or lowered.endswith(("_sizes", "_dims"))


def dims_list(value: Value | None) -> list[int] | None:
    """A `dim` argument: one int or a tuple of ints."""
    single = int_of(value)
    if single is not None:
        return [single]
    items = items_of(value)
    if items is None:
        return None
    values = [int_of(v) for v in items]
    return None if None in values else values  # type: ignore[return-value]


def bool_of(value: Value | None, default: bool | None = False) -> bool | None:
    if value is None:
        return default
    if isinstance(value, Bool):
        return value.value
    return None


def tensor_of(value: Value | None) -> Tensor | None:
    """A tensor operand; Python numbers are 0-d tensors; None when unknown."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (Int, Num)):
        return scalar_tensor(dtype="long" if isinstance(value, Int) else "float")
    if isinstance(value, Bool):
        return scalar_tensor(dtype="bool")
    return None


def dtype_of(value: Value | None) -> str | None:
    if isinstance(value, TorchRef):
        return DTYPES.get(value.qualname.rsplit(".", 1)[-1])
    if isinstance(value, Str):
        return DTYPES.get(value.value)
    return None


def dtype_given(call, default: str | None) -> str | None:
    """The dtype a factory makes: `default` without a `dtype=` argument, the one named by it,
    and unknown (None) when it names one this pass does not know (`dtype=self.dtype`)."""
    value = call.kwargs.get("dtype")
    if value is None or value is NONE:
        return default
    return dtype_of(value)

