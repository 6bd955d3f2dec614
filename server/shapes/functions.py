"""Shape rules of torch functions and tensor methods, keyed by name.

`METHODS[name](call, tensor)` answers `tensor.name(*args)`; `FUNCTIONS[qualname](call)`
answers `torch.name(...)` / `torch.nn.functional.name(...)`.  Many functions are the
method with the tensor first (`torch.sum(x, 1)` is `x.sum(1)`): those are derived
from `METHODS`.  A name missing here gives an unknown result.
"""
from __future__ import annotations

from typing import Callable

from server.shapes import ops
from server.shapes.dims import Dim
from server.shapes.layers import Site, interpolate, loss_result, pad, param_of
from server.shapes.ops import ONE, WILDCARD, ShapeError, describe
from server.shapes.values import (
    NONE, NUM, UNKNOWN, Bool, Int, ListValue, Num, Opaque, SizeOf, Str, Tensor, TorchRef,
    TupleValue, Value, scalar_tensor,
)

DTYPES = {
    "bool": "bool", "long": "long", "int64": "long", "int": "long", "int32": "long", "int16": "long",
    "int8": "long", "short": "long", "float": "float", "float32": "float", "float64": "float", "double": "float",
    "half": "float", "float16": "float", "bfloat16": "float",
}


class Call:
    """One call of a torch function or tensor method: its arguments and the site."""

    __slots__ = ("site", "args", "kwargs")

    def __init__(self, site: Site, args: list[Value], kwargs: dict[str, Value]):
        self.site, self.args, self.kwargs = site, args, kwargs

    def arg(self, position: int, name: str, default: Value | None = None) -> Value | None:
        if name in self.kwargs:
            return self.kwargs[name]
        if position < len(self.args):
            return self.args[position]
        return default

    def origin(self):
        return self.site.here()

    def fail(self, message: str) -> None:
        self.site.fail(message)


# ------------------------------------------------------------------ converters
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
    """`(B, T)`, `B, T`, `x.shape`, `[B, -1]` as sizes; None when the count is unknown."""
    if len(values) == 1:
        items = items_of(values[0])
        if items is not None:
            values = items
        elif not isinstance(values[0], (Int, Opaque)):
            return None
    return [size_of(v) for v in values]


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


# ----------------------------------------------------------- method helpers
MethodRule = Callable[[Call, Tensor], Value]
METHODS: dict[str, MethodRule] = {}
FUNCTIONS: dict[str, Callable[[Call], Value]] = {}


def method(*names: str):
    def decorate(rule: MethodRule) -> MethodRule:
        for name in names:
            METHODS[name] = rule
        return rule
    return decorate


def function(*names: str):
    def decorate(rule):
        for name in names:
            FUNCTIONS[name] = rule
        return rule
    return decorate


SAME_SHAPE = (
    "abs", "neg", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "sign", "floor", "ceil", "round", "trunc",
    "frac", "reciprocal", "square", "erf", "erfc", "erfinv", "clamp", "clip", "clamp_min", "clamp_max",
    "nan_to_num", "logit", "detach", "clone", "contiguous", "cpu", "cuda", "requires_grad_", "pin_memory",
    "softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp", "flip", "fliplr", "flipud", "roll", "tril",
    "triu", "relu_", "sigmoid_", "tanh_", "exp_", "log_", "abs_", "neg_", "sqrt_", "clamp_", "clip_", "fill_",
    "zero_", "normal_", "uniform_", "bernoulli", "bernoulli_", "copy_", "masked_fill_", "detach_",
    "share_memory_", "record_stream", "softplus", "gelu", "silu", "mish", "hardtanh", "elu", "leaky_relu",
    "positive", "conj", "resolve_conj", "resolve_neg", "index_fill", "index_fill_", "index_add", "index_add_",
    "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "index_copy", "index_copy_",
    "masked_scatter", "put_", "lerp", "lerp_", "nan_to_num_", "add_", "sub_", "mul_", "div_", "pow_",
    "float_power", "sgn", "deg2rad", "rad2deg", "digamma", "lgamma", "polygamma", "i0", "sinc", "heaviside",
    "clone_", "retain_grad", "coalesce", "exponential_", "geometric_", "log_normal_", "cauchy_", "random_",
    "softmin", "dropout", "requires_grad", "align_to", "rename", "refine_names", "data_ptr_like",
)


def _same(call: Call, x: Tensor) -> Value:
    return x


for _name in SAME_SHAPE:
    METHODS[_name] = _same

CAST = {"float": "float", "double": "float", "half": "float", "bfloat16": "float", "long": "long", "int": "long",
        "short": "long", "byte": None, "char": None, "bool": "bool"}
for _name, _dtype in CAST.items():
    METHODS[_name] = (lambda kind: lambda call, x: x.with_dims(x.dims, dtype=kind))(_dtype)


@method("to", "type")
def _to(call: Call, x: Tensor) -> Value:
    for value in list(call.args) + [call.kwargs.get("dtype")]:
        if isinstance(value, Tensor):
            return x.with_dims(x.dims, dtype=value.dtype)
        kind = dtype_of(value)
        if kind is not None:
            return x.with_dims(x.dims, dtype=kind)
    return x


@method("type_as")
def _type_as(call: Call, x: Tensor) -> Value:
    other = call.arg(0, "other")
    return x.with_dims(x.dims, dtype=other.dtype if isinstance(other, Tensor) else None)


@method("isnan", "isinf", "isfinite", "logical_not", "isneginf", "isposinf", "signbit")
def _to_bool(call: Call, x: Tensor) -> Value:
    return x.with_dims(x.dims, dtype="bool")


# ------------------------------------------------------------- broadcasting
BROADCASTING = ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide",
                "remainder", "fmod", "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot",
                "bitwise_and", "bitwise_or", "bitwise_xor", "copysign", "xlogy", "rsub", "ldexp", "logaddexp")
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal", "not_equal",
               "logical_and", "logical_or", "logical_xor", "isclose")


def broadcast_operands(call: Call, tensors: list[Tensor], what: str | None = None) -> Tensor | None:
    try:
        return ops.broadcast(tensors, call.origin())
    except ShapeError:
        call.fail(ops.broadcast_error(tensors, what or f"`{call.site.callee}`"))
        return None


def _binary(dtype: str | None):
    def rule(call: Call, x: Tensor) -> Value:
        other = tensor_of(call.arg(0, "other"))
        if other is None:
            return UNKNOWN
        result = broadcast_operands(call, [x, other])
        if result is None:
            return UNKNOWN
        return result.with_dims(result.dims, dtype=dtype) if dtype != "keep" else result
    return rule


for _name in BROADCASTING:
    METHODS[_name] = _binary("keep")
    METHODS[_name + "_"] = _same
for _name in COMPARISONS:
    METHODS[_name] = _binary("bool")


@method("masked_fill", "masked_fill_")
def _masked_fill(call: Call, x: Tensor) -> Value:
    mask = call.arg(0, "mask")
    if isinstance(mask, Tensor):
        try:
            joined = ops.broadcast([x, mask])
        except ShapeError:
            call.fail(f"`{call.site.callee}` fills {describe(x)} through the mask {describe(mask)}, "
                      "which does not broadcast to it")
            return UNKNOWN
        if x.rank is not None and joined.rank is not None and joined.rank > x.rank:
            return UNKNOWN
    return x


@method("where")
def _where_method(call: Call, x: Tensor) -> Value:
    condition, other = tensor_of(call.arg(0, "condition")), tensor_of(call.arg(1, "other"))
    if condition is None or other is None:
        return UNKNOWN
    result = broadcast_operands(call, [condition, x, other], "`where`")
    return result.with_dims(result.dims, dtype=x.dtype) if result is not None else UNKNOWN


# ------------------------------------------------------------------ sizes
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


# ---------------------------------------------------------- view / reshape
def _sizes_args(call: Call) -> list | None:
    if "size" in call.kwargs or "shape" in call.kwargs:
        return sizes_from([call.kwargs.get("size") or call.kwargs.get("shape")])
    if not call.args or call.kwargs:
        return None
    return sizes_from(call.args)


@method("view", "reshape")
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


def _shaped_like_argument(call: Call, x: Tensor, position: int, name: str) -> Value:
    """`x`'s values in the shape of another tensor argument (`view_as(other)`, `gather(dim, index)`)."""
    other = call.arg(position, name)
    if not isinstance(other, Tensor):
        return UNKNOWN
    return other.with_dims(other.dims, dtype=x.dtype, origin=call.origin())


@method("view_as", "reshape_as", "expand_as")
def _view_as(call: Call, x: Tensor) -> Value:
    return _shaped_like_argument(call, x, 0, "other")


@method("flatten")
def _flatten(call: Call, x: Tensor) -> Value:
    start, end = int_of(call.arg(0, "start_dim", Int(Dim.const(0)))), int_of(call.arg(1, "end_dim", Int(Dim.const(-1))))
    if start is None or end is None:
        return UNKNOWN
    return ops.flatten(x, start, end, call.origin())


@method("unflatten")
def _unflatten(call: Call, x: Tensor) -> Value:
    dim, sizes = int_of(call.arg(0, "dim")), sizes_from([call.arg(1, "sizes") or UNKNOWN])
    if dim is None or sizes is None:
        return UNKNOWN
    return ops.unflatten(x, dim, sizes, call.origin())


@method("permute")
def _permute(call: Call, x: Tensor) -> Value:
    values = call.args if len(call.args) != 1 else (items_of(call.args[0]) or call.args)
    if "dims" in call.kwargs:
        values = items_of(call.kwargs["dims"]) or []
    order = [int_of(v) for v in values]
    if not order or None in order:
        return UNKNOWN
    return ops.permute(x, order, call.origin())  # type: ignore[arg-type]


@method("transpose", "swapaxes", "swapdims")
def _transpose(call: Call, x: Tensor) -> Value:
    first, second = int_of(call.arg(0, "dim0")), int_of(call.arg(1, "dim1"))
    if first is None or second is None:
        return UNKNOWN
    return ops.transpose(x, first, second, call.origin())


@method("t")
def _t(call: Call, x: Tensor) -> Value:
    if x.rank is not None and x.rank < 2:
        return x
    if x.rank == 2 or (x.rank is None and len(x.dims) == 2):
        return Tensor((x.dims[-1], x.dims[-2]), False, x.dtype, call.origin())
    return UNKNOWN


@method("movedim", "moveaxis")
def _movedim(call: Call, x: Tensor) -> Value:
    source, destination = dims_list(call.arg(0, "source")), dims_list(call.arg(1, "destination"))
    if source is None or destination is None:
        return UNKNOWN
    return ops.movedim(x, source, destination, call.origin())


@method("squeeze")
def _squeeze(call: Call, x: Tensor) -> Value:
    dim = call.arg(0, "dim")
    if dim is None:
        return ops.squeeze(x, None, call.origin())
    dims = dims_list(dim)
    return ops.squeeze(x, dims, call.origin()) if dims is not None else UNKNOWN


@method("unsqueeze")
def _unsqueeze(call: Call, x: Tensor) -> Value:
    dim = int_of(call.arg(0, "dim"))
    return ops.unsqueeze(x, dim, call.origin()) if dim is not None else UNKNOWN


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


@method("repeat_interleave")
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


@method("narrow")
def _narrow(call: Call, x: Tensor) -> Value:
    dim, length = int_of(call.arg(0, "dim")), dim_of(call.arg(2, "length"))
    return ops.resize_dim(x, dim, length, call.origin()) if dim is not None else UNKNOWN


@method("select")
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


# ------------------------------------------------------------- reductions
def _reduction(dtype: str | None = "keep"):
    def rule(call: Call, x: Tensor) -> Value:
        dim = call.arg(0, "dim")
        keepdim = bool_of(call.kwargs.get("keepdim", call.args[1] if len(call.args) > 1 and isinstance(call.args[1], Bool)
                                          else None))
        if keepdim is None:
            return UNKNOWN
        if dim is None or dim is NONE:
            return ops.reduce(x, None, keepdim, call.origin(), dtype)
        dims = dims_list(dim)
        return ops.reduce(x, dims, keepdim, call.origin(), dtype) if dims is not None else UNKNOWN
    return rule


for _name in ("sum", "mean", "prod", "amax", "amin", "logsumexp", "nansum", "nanmean", "count_nonzero"):
    METHODS[_name] = _reduction()
for _name in ("all", "any"):
    METHODS[_name] = _reduction("bool")
for _name in ("argmax", "argmin"):
    METHODS[_name] = _reduction("long")


@method("std", "var")
def _spread(call: Call, x: Tensor) -> Value:
    """`x.std()`, `x.std(unbiased)`, `x.std(dim, keepdim=...)`: the old positional forms are ambiguous."""
    dim = call.arg(0, "dim")
    if isinstance(dim, Bool):  # `x.std(False)`: unbiased, over every element
        return ops.reduce(x, None, False, call.origin())
    keepdim = bool_of(call.kwargs.get("keepdim"))
    if len(call.args) > 1 or keepdim is None:
        return UNKNOWN
    if dim is None or dim is NONE:
        return ops.reduce(x, None, keepdim, call.origin())
    dims = dims_list(dim)
    return ops.reduce(x, dims, keepdim, call.origin()) if dims is not None else UNKNOWN


@method("norm")
def _norm(call: Call, x: Tensor) -> Value:
    dim = call.arg(1, "dim")
    keepdim = bool_of(call.arg(2, "keepdim"))
    if keepdim is None:
        return UNKNOWN
    if dim is None or dim is NONE:
        return ops.reduce(x, None, keepdim, call.origin())
    dims = dims_list(dim)
    return ops.reduce(x, dims, keepdim, call.origin()) if dims is not None else UNKNOWN


@method("max", "min", "median", "mode", "nanmedian")
def _extreme(call: Call, x: Tensor) -> Value:
    first = call.arg(0, "dim")
    if isinstance(first, Tensor):
        other = _binary("keep")
        return other(call, x)
    if first is None:
        return ops.reduce(x, None, False, call.origin())
    dim = int_of(first)
    keepdim = bool_of(call.arg(1, "keepdim"))
    if dim is None or keepdim is None:
        return UNKNOWN
    values = ops.reduce(x, [dim], keepdim, call.origin())
    indices = values.with_dims(values.dims, dtype="long")
    return TupleValue((values, indices), ("values", "indices"))


@method("kthvalue")
def _kthvalue(call: Call, x: Tensor) -> Value:
    dim, keepdim = int_of(call.arg(1, "dim", Int(Dim.const(-1)))), bool_of(call.arg(2, "keepdim"))
    if dim is None or keepdim is None:
        return UNKNOWN
    values = ops.reduce(x, [dim], keepdim, call.origin())
    return TupleValue((values, values.with_dims(values.dims, dtype="long")), ("values", "indices"))


@method("topk")
def _topk(call: Call, x: Tensor) -> Value:
    k, dim = dim_of(call.arg(0, "k")), int_of(call.arg(1, "dim", Int(Dim.const(-1))))
    if dim is None:
        return UNKNOWN
    values = ops.resize_dim(x, dim, k, call.origin())
    return TupleValue((values, values.with_dims(values.dims, dtype="long")), ("values", "indices"))


@method("sort")
def _sort(call: Call, x: Tensor) -> Value:
    return TupleValue((x, x.with_dims(x.dims, dtype="long")), ("values", "indices"))


@method("argsort")
def _argsort(call: Call, x: Tensor) -> Value:
    return x.with_dims(x.dims, dtype="long")


@method("cummax", "cummin")
def _cumulative_pair(call: Call, x: Tensor) -> Value:
    return TupleValue((x, x.with_dims(x.dims, dtype="long")), ("values", "indices"))


# ------------------------------------------------------------------ matmul
def _matmul_rule(kind: str):
    def rule(call: Call, x: Tensor) -> Value:
        other = call.arg(0, "other") if kind != "bmm" else call.arg(0, "mat2")
        if kind == "mm":
            other = call.arg(0, "mat2")
        if not isinstance(other, Tensor):
            return UNKNOWN
        return matmul_of(call, x, other, kind)
    return rule


def matmul_of(call: Call, a: Tensor, b: Tensor, kind: str) -> Value:
    rule = {"matmul": ops.matmul, "mm": ops.mm, "bmm": ops.bmm}[kind]
    try:
        return rule(a, b, call.origin())
    except ShapeError as error:
        if str(error) == "batch":
            call.fail(f"`{call.site.callee}` multiplies batches of different sizes: {describe(a)} and {describe(b)}")
        else:
            inner_a = a.dims[-1]
            inner_b = b.dims[-2] if len(b.dims) >= 2 else b.dims[-1]
            call.fail(f"`{call.site.callee}` multiplies {describe(a)} by {describe(b)}: the inner sizes "
                      f"{inner_a.render()} and {inner_b.render()} differ")
        return UNKNOWN


METHODS["matmul"] = _matmul_rule("matmul")
METHODS["mm"] = _matmul_rule("mm")
METHODS["bmm"] = _matmul_rule("bmm")


@method("mv")
def _mv(call: Call, x: Tensor) -> Value:
    other = call.arg(0, "vec")
    return matmul_of(call, x, other, "matmul") if isinstance(other, Tensor) and x.rank == 2 else UNKNOWN


@method("dot", "inner", "vdot")
def _dot(call: Call, x: Tensor) -> Value:
    return scalar_tensor(call.origin(), x.dtype) if x.rank == 1 else UNKNOWN


@method("outer", "ger")
def _outer(call: Call, x: Tensor) -> Value:
    other = call.arg(0, "vec2")
    if isinstance(other, Tensor) and x.rank == 1 and other.rank == 1:
        return Tensor((x.dims[0], other.dims[0]), False, x.dtype, call.origin())
    return UNKNOWN


# ---------------------------------------------------------------- gathering
@method("gather")
def _gather(call: Call, x: Tensor) -> Value:
    return _shaped_like_argument(call, x, 1, "index")


@method("take_along_dim")
def _take_along_dim(call: Call, x: Tensor) -> Value:
    index = call.arg(0, "indices")
    if not isinstance(index, Tensor) or call.arg(1, "dim") is None:
        return UNKNOWN
    try:
        return ops.broadcast([x, index], call.origin()).with_dims(index.dims if index.rank == x.rank else
                                                                  ops.broadcast([x, index]).dims, dtype=x.dtype)
    except ShapeError:
        return UNKNOWN


@method("index_select")
def _index_select(call: Call, x: Tensor) -> Value:
    dim, index = int_of(call.arg(0, "dim")), call.arg(1, "index")
    if dim is None or not isinstance(index, Tensor) or index.rank not in (0, 1):
        return UNKNOWN
    size = index.dims[0] if index.rank == 1 else ONE
    return ops.resize_dim(x, dim, size, call.origin())


@method("masked_select")
def _masked_select(call: Call, x: Tensor) -> Value:
    return Tensor((None,), False, x.dtype, call.origin())


@method("nonzero", "argwhere")
def _nonzero(call: Call, x: Tensor) -> Value:
    if bool_of(call.kwargs.get("as_tuple")):
        return UNKNOWN
    rank = Dim.const(x.rank) if x.rank is not None else None
    return Tensor((None, rank), False, "long", call.origin())


@method("split")
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
    if sizes is None:
        part = ops.resize_dim(x, dim, None, call.origin())
        return ListValue([], exact=False, kind="tuple", element=part) if part.has_shape else UNKNOWN
    result = ops.pieces(x, dim, sizes, call.origin())
    return result if result is not None else UNKNOWN


@method("chunk")
def _chunk(call: Call, x: Tensor) -> Value:
    chunks, dim = int_of(call.arg(0, "chunks")), int_of(call.arg(1, "dim", Int(Dim())))
    if chunks is None or dim is None:
        return UNKNOWN
    sizes = ops.chunk_sizes(x.dim(dim), chunks)
    if sizes is None:
        part = ops.resize_dim(x, dim, None, call.origin())
        return ListValue([], exact=False, kind="tuple", element=part) if part.has_shape else UNKNOWN
    result = ops.pieces(x, dim, sizes, call.origin())
    return result if result is not None else UNKNOWN


@method("unbind")
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


# --------------------------------------------------------------- new tensors
def _new_factory(fill_position: int | None):
    def rule(call: Call, x: Tensor) -> Value:
        size = call.arg(0, "size")
        sizes = sizes_from([size]) if size is not None and fill_position is not None else _sizes_args_until(call)
        if sizes is None or WILDCARD in sizes:
            return UNKNOWN
        dtype = dtype_of(call.kwargs.get("dtype")) or x.dtype
        return Tensor(tuple(sizes), False, dtype, call.origin())
    return rule


def _sizes_args_until(call: Call) -> list | None:
    if not call.args:
        return None
    return sizes_from(call.args)


METHODS["new_zeros"] = _new_factory(None)
METHODS["new_ones"] = _new_factory(None)
METHODS["new_empty"] = _new_factory(None)
METHODS["new_full"] = _new_factory(1)


@method("new_tensor")
def _new_tensor(call: Call, x: Tensor) -> Value:
    return literal_tensor(call, call.arg(0, "data"))


# ========================================================== torch functions
def _as_method(name: str):
    """`torch.name(x, *rest)` is `x.name(*rest)`."""
    rule = METHODS[name]

    def function_rule(call: Call) -> Value:
        tensor = call.arg(0, "input")
        if not isinstance(tensor, Tensor):
            return UNKNOWN
        rest = call.args[1:] if call.args else []
        kwargs = {k: v for k, v in call.kwargs.items() if k != "input"}
        return rule(Call(call.site, list(rest), kwargs), tensor)
    return function_rule


TORCH_METHOD_FUNCTIONS = (
    set(SAME_SHAPE) | set(BROADCASTING) | set(COMPARISONS) | {
        "sum", "mean", "prod", "amax", "amin", "logsumexp", "nansum", "nanmean", "count_nonzero", "all", "any",
        "argmax", "argmin", "std", "var", "max", "min", "median", "mode", "topk", "sort", "argsort", "kthvalue",
        "flatten", "unflatten", "permute", "transpose", "swapaxes", "swapdims", "t", "movedim", "moveaxis",
        "squeeze", "unsqueeze", "reshape", "matmul", "mm", "bmm", "mv", "dot", "inner", "outer", "ger", "gather",
        "take_along_dim", "index_select", "masked_select", "nonzero", "argwhere", "masked_fill", "split", "chunk",
        "unbind", "narrow", "select", "repeat_interleave", "isnan", "isinf", "isfinite", "logical_not", "cummax",
        "cummin", "norm",
    }
)
for _name in TORCH_METHOD_FUNCTIONS:
    if _name in METHODS:
        FUNCTIONS[f"torch.{_name}"] = _as_method(_name)
for _name in ("relu", "gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu", "softplus", "softsign", "hardtanh",
              "hardswish", "hardsigmoid", "relu6", "sigmoid", "tanh", "logsigmoid", "softmax", "log_softmax",
              "softmin", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "normalize",
              "batch_norm", "instance_norm", "group_norm", "local_response_norm", "tanhshrink", "softshrink",
              "hardshrink", "threshold", "prelu", "rrelu", "gumbel_softmax", "rms_norm"):
    FUNCTIONS[f"torch.nn.functional.{_name}"] = _as_method("clone")
for _name in ("sigmoid", "tanh", "relu", "softmax", "log_softmax", "dropout", "layer_norm"):
    FUNCTIONS.setdefault(f"torch.{_name}", _as_method("clone"))
FUNCTIONS["torch.special.expit"] = _as_method("clone")
FUNCTIONS["torch.special.softmax"] = _as_method("clone")
FUNCTIONS["torch.special.log_softmax"] = _as_method("clone")
FUNCTIONS["torch.nn.functional.pairwise_distance"] = lambda call: UNKNOWN


# ---------------------------------------------------------------- factories
def _factory(dtype: str | None, fill: bool = False):
    def rule(call: Call) -> Value:
        args = call.args[:-1] if fill and call.args else call.args
        if fill and "size" not in call.kwargs and len(call.args) < 2:
            return UNKNOWN
        sizes = sizes_from([call.kwargs["size"]]) if "size" in call.kwargs else (sizes_from(args) if args else None)
        if not fill and not call.args and "size" not in call.kwargs:
            return UNKNOWN
        if fill and "size" not in call.kwargs:
            sizes = sizes_from([call.args[0]])
        if sizes is None or WILDCARD in sizes:
            return UNKNOWN
        kind = dtype_of(call.kwargs.get("dtype")) or dtype
        return Tensor(tuple(sizes), False, kind, call.origin())
    return rule


for _name in ("zeros", "ones", "empty", "rand", "randn"):
    FUNCTIONS[f"torch.{_name}"] = _factory("float")
FUNCTIONS["torch.full"] = _factory(None, fill=True)


@function("torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.rand_like", "torch.randn_like",
          "torch.full_like", "torch.randint_like")
def _like(call: Call) -> Value:
    source = call.arg(0, "input")
    if not isinstance(source, Tensor):
        return UNKNOWN
    return source.with_dims(source.dims, dtype=dtype_of(call.kwargs.get("dtype")) or source.dtype,
                            origin=source.origin)


@function("torch.randint")
def _randint(call: Call) -> Value:
    size = call.kwargs.get("size")
    if size is None:
        size = call.args[-1] if len(call.args) in (2, 3) else None
    sizes = sizes_from([size]) if size is not None else None
    if sizes is None or WILDCARD in sizes:
        return UNKNOWN
    return Tensor(tuple(sizes), False, dtype_of(call.kwargs.get("dtype")) or "long", call.origin())


@function("torch.randperm")
def _randperm(call: Call) -> Value:
    return Tensor((dim_of(call.arg(0, "n")),), False, "long", call.origin())


@function("torch.arange")
def _arange(call: Call) -> Value:
    values = list(call.args)
    for name in ("start", "end", "step"):
        if name in call.kwargs:
            return UNKNOWN if name != "end" or values else Tensor((dim_of(call.kwargs["end"]),), False, "long",
                                                                   call.origin())
    if not values or len(values) > 3 or any(not isinstance(v, Int) for v in values):
        dtype = "float" if any(isinstance(v, Num) for v in values) else None
        return Tensor((None,), False, dtype, call.origin()) if values else UNKNOWN
    dims = [v.dim for v in values]  # type: ignore[union-attr]
    kind = dtype_of(call.kwargs.get("dtype")) or "long"
    if len(dims) == 1:
        return Tensor((dims[0],), False, kind, call.origin())
    start, end = dims[0], dims[1]
    step = dims[2] if len(dims) == 3 else ONE
    if start is None or end is None or step is None or step.as_int() in (None, 0):
        return Tensor((None,), False, kind, call.origin())
    if step.as_int() > 0:
        count = (end - start + step - ONE).floordiv(step)  # ceil((end - start) / step)
    else:
        magnitude = Dim.const(-step.as_int())
        count = (start - end + magnitude - ONE).floordiv(magnitude)  # counting down
    if count is not None and count.is_int:
        count = Dim.const(max(count.as_int(), 0))
    return Tensor((count,), False, kind, call.origin())


@function("torch.linspace", "torch.logspace")
def _linspace(call: Call) -> Value:
    return Tensor((dim_of(call.arg(2, "steps")),), False, "float", call.origin())


@function("torch.eye")
def _eye(call: Call) -> Value:
    n, m = dim_of(call.arg(0, "n")), call.arg(1, "m")
    return Tensor((n, dim_of(m) if m is not None else n), False, dtype_of(call.kwargs.get("dtype")) or "float",
                  call.origin())


@function("torch.tensor", "torch.as_tensor")
def _tensor(call: Call) -> Value:
    result = literal_tensor(call, call.arg(0, "data"))
    kind = dtype_of(call.kwargs.get("dtype"))
    if isinstance(result, Tensor) and kind is not None:
        return result.with_dims(result.dims, dtype=kind)
    return result


def literal_tensor(call: Call, data: Value | None) -> Value:
    shape = _literal_shape(data, 0)
    if shape is None:
        return UNKNOWN
    dims, kind = shape
    return Tensor(tuple(Dim.const(d) for d in dims), False, kind, call.origin())


def _literal_shape(value: Value | None, depth: int) -> tuple[list[int], str | None] | None:
    if depth > 8 or value is None:
        return None
    if isinstance(value, Int):
        return [], "long"
    if isinstance(value, Num):
        return [], "float"
    if isinstance(value, Bool):
        return [], "bool"
    items = items_of(value) if not isinstance(value, SizeOf) else None
    if items is None:
        return None
    if not items:
        return [0], "float"
    shapes = [_literal_shape(item, depth + 1) for item in items]
    if any(s is None for s in shapes) or len({tuple(s[0]) for s in shapes}) != 1:  # type: ignore[index]
        return None
    kinds = {s[1] for s in shapes}  # type: ignore[index]
    kind = "float" if "float" in kinds else kinds.pop() if len(kinds) == 1 else None
    return [len(items)] + shapes[0][0], kind  # type: ignore[index]


@function("torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer")
def _parameter(call: Call) -> Value:
    data = call.arg(0, "data")
    return data if isinstance(data, Tensor) else UNKNOWN


@function("torch.compile", "torch.jit.script", "torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
          "torch.nn.parallel.DistributedDataParallel")
def _wrapped_module(call: Call) -> Value:
    """`torch.compile(model)`, `DistributedDataParallel(model)`: called like the module itself."""
    module = call.arg(0, "model") or call.arg(0, "obj") or call.arg(0, "module")
    return module if module is not None and not isinstance(module, (Str, Int)) else UNKNOWN


@function("torch.multinomial")
def _multinomial(call: Call) -> Value:
    probabilities, samples = call.arg(0, "input"), dim_of(call.arg(1, "num_samples"))
    if not isinstance(probabilities, Tensor) or not probabilities.dims:
        return UNKNOWN
    return Tensor(probabilities.dims[:-1] + (samples,), probabilities.variadic, "long", call.origin())


# ----------------------------------------------------------- cat and stack
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


@function("torch.cat", "torch.concat", "torch.concatenate")
def _cat(call: Call) -> Value:
    found = _tensor_list(call.arg(0, "tensors"))
    dim = int_of(call.arg(1, "dim", Int(Dim())))
    if found is None or dim is None:
        return UNKNOWN
    tensors, count = found
    if count is None:  # some tensors of this shape: the joined dim is unknown
        result = ops.resize_dim(tensors[0], dim, None, call.origin())
        return result if result.has_shape else UNKNOWN
    try:
        return ops.cat(tensors, dim, call.origin())
    except ShapeError:
        call.fail(f"`{call.site.callee}` joins tensors whose other dims differ: "
                  + ", ".join(describe(t) for t in tensors))
        return UNKNOWN


@function("torch.stack")
def _stack(call: Call) -> Value:
    found = _tensor_list(call.arg(0, "tensors"))
    dim = int_of(call.arg(1, "dim", Int(Dim())))
    if found is None or dim is None:
        return UNKNOWN
    tensors, count = found
    try:
        return ops.stack(tensors, dim, count, call.origin())
    except ShapeError:
        call.fail(f"`{call.site.callee}` stacks tensors of different shapes: " + ", ".join(describe(t) for t in tensors))
        return UNKNOWN


@function("torch.where")
def _where(call: Call) -> Value:
    if len(call.args) == 1 and not call.kwargs:
        return UNKNOWN
    operands = [tensor_of(call.arg(i, name)) for i, name in enumerate(("condition", "input", "other"))]
    if any(o is None for o in operands):
        return UNKNOWN
    result = broadcast_operands(call, operands, "`torch.where`")  # type: ignore[arg-type]
    if result is None:
        return UNKNOWN
    kinds = {operands[1].dtype, operands[2].dtype}  # type: ignore[union-attr]
    return result.with_dims(result.dims, dtype=kinds.pop() if len(kinds) == 1 else None)


@function("torch.einsum")
def _einsum(call: Call) -> Value:
    spec = call.args[0] if call.args else None
    operands = call.args[1:]
    if len(operands) == 1 and items_of(operands[0]) is not None:
        operands = items_of(operands[0])  # type: ignore[assignment]
    if not isinstance(spec, Str) or not operands or not all(isinstance(o, Tensor) for o in operands):
        return UNKNOWN
    try:
        return ops.einsum(spec.value, operands, call.origin())  # type: ignore[arg-type]
    except ShapeError:
        return UNKNOWN


@function("torch.baddbmm", "torch.addbmm")
def _baddbmm(call: Call) -> Value:
    a, b = call.arg(1, "batch1"), call.arg(2, "batch2")
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return UNKNOWN
    return matmul_of(call, a, b, "bmm")


@function("torch.cdist")
def _cdist(call: Call) -> Value:
    a, b = call.arg(0, "x1"), call.arg(1, "x2")
    if not isinstance(a, Tensor) or not isinstance(b, Tensor) or len(a.dims) < 2 or len(b.dims) < 2:
        return UNKNOWN
    return Tensor(a.dims[:-1] + (b.dims[-2],), a.variadic, a.dtype, call.origin())


@function("torch.diag")
def _diag(call: Call) -> Value:
    x = call.arg(0, "input")
    if isinstance(x, Tensor) and x.rank == 1 and call.arg(1, "diagonal") is None:
        return Tensor((x.dims[0], x.dims[0]), False, x.dtype, call.origin())
    return UNKNOWN


# -------------------------------------------------------- nn.functional
F = "torch.nn.functional."


@function(F + "linear")
def _f_linear(call: Call) -> Value:
    x, weight = call.arg(0, "input"), call.arg(1, "weight")
    if not isinstance(x, Tensor) or not isinstance(weight, Tensor) or weight.rank not in (1, 2):
        return UNKNOWN
    if weight.rank == 1:
        return ops.reduce(x, [-1], False, call.origin()) if x.has_shape else UNKNOWN
    out_features, in_features = weight.dims
    if x.dims and ops.surely_differ(x.dims[-1], in_features):
        call.fail(f"`{call.site.callee}` applies a weight of shape {describe(weight)} to {describe(x)}: "
                  f"it expects {in_features.render()} features in the last dim")
        return UNKNOWN
    return ops.linear(x, in_features, out_features, call.origin())


def _f_conv(count: int, transposed: bool):
    def rule(call: Call) -> Value:
        x, weight = call.arg(0, "input"), call.arg(1, "weight")
        if not isinstance(x, Tensor) or not isinstance(weight, Tensor) or weight.rank != count + 2:
            return UNKNOWN
        groups = dim_of(call.arg(6 if transposed else 6, "groups", Int(ONE)))
        shaped = ops.spatial_input(x, count)
        if shaped is None or groups is None:
            return UNKNOWN
        channels, sizes = shaped
        expected = weight.dims[0] if transposed else (weight.dims[1] * groups if weight.dims[1] is not None else None)
        if ops.surely_differ(channels, expected):
            call.fail(f"`{call.site.callee}` convolves {describe(x)} with a weight of shape {describe(weight)}, "
                      f"which expects {expected.render()} input channels")
            return UNKNOWN
        out = (weight.dims[1] * groups if weight.dims[1] is not None else None) if transposed else weight.dims[0]
        stride = _spatial_arg(call, 3, "stride", count, ONE)
        padding = _spatial_arg(call, 4, "padding", count, Dim())
        kernel = weight.dims[2:]
        if transposed:
            output_padding = _spatial_arg(call, 5, "output_padding", count, Dim())
            dilation = _spatial_arg(call, 7, "dilation", count, ONE)
            if None in (stride, padding, output_padding, dilation):
                return ops.spatial(x, count, out, [None] * count, call.origin())
            new = [ops.conv_transpose_output(s, k, st, p, d, e) for s, k, st, p, d, e in
                   zip(sizes, kernel, stride, padding, dilation, output_padding)]
        else:
            dilation = _spatial_arg(call, 5, "dilation", count, ONE)
            if padding == "same":
                new = list(sizes)
            elif None in (stride, padding, dilation):
                return ops.spatial(x, count, out, [None] * count, call.origin())
            else:
                new = [ops.conv_output(s, k, st, p, d) for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]
        return ops.spatial(x, count, out, new, call.origin())
    return rule


def _spatial_arg(call: Call, position: int, name: str, count: int, default: Dim):
    value = call.arg(position, name)
    if value is None:
        return (default,) * count
    if isinstance(value, Str):
        return "same" if value.value == "same" else ((Dim(),) * count if value.value == "valid" else None)
    parameter = param_of(value)
    if isinstance(parameter, Dim):
        return (parameter,) * count
    if isinstance(parameter, tuple) and len(parameter) == count and all(isinstance(p, Dim) for p in parameter):
        return parameter
    return None


for _count in (1, 2, 3):
    FUNCTIONS[f"{F}conv{_count}d"] = _f_conv(_count, False)
    FUNCTIONS[f"{F}conv_transpose{_count}d"] = _f_conv(_count, True)
    FUNCTIONS[f"torch.conv{_count}d"] = _f_conv(_count, False)


def _f_pool(count: int, average: bool):
    def rule(call: Call) -> Value:
        x = call.arg(0, "input")
        if not isinstance(x, Tensor):
            return UNKNOWN
        shaped = ops.spatial_input(x, count)
        if shaped is None:
            return UNKNOWN
        channels, sizes = shaped
        kernel = _spatial_arg(call, 1, "kernel_size", count, ONE)
        stride_value = call.arg(2, "stride")
        stride = kernel if stride_value is None or stride_value is NONE else _spatial_arg(call, 2, "stride", count, ONE)
        padding = _spatial_arg(call, 3, "padding", count, Dim())
        if average:
            dilation, ceil_mode = (ONE,) * count, bool_of(call.arg(4, "ceil_mode"))
        else:
            dilation, ceil_mode = _spatial_arg(call, 4, "dilation", count, ONE), bool_of(call.arg(5, "ceil_mode"))
        if None in (kernel, stride, padding, dilation) or ceil_mode is None or "same" in (kernel, stride, padding):
            new = [None] * count
        else:
            new = [ops.pool_output(s, k, st, p, d, ceil_mode)
                   for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]
        result = ops.spatial(x, count, channels, new, call.origin())
        if not average and bool_of(call.arg(6, "return_indices")):
            return TupleValue((result, result.with_dims(result.dims, dtype="long")))
        return result
    return rule


def _f_adaptive(count: int):
    def rule(call: Call) -> Value:
        x = call.arg(0, "input")
        if not isinstance(x, Tensor):
            return UNKNOWN
        shaped = ops.spatial_input(x, count)
        if shaped is None:
            return UNKNOWN
        channels, sizes = shaped
        size = param_of(call.arg(1, "output_size") or UNKNOWN)
        if isinstance(size, Dim):
            new = [size] * count
        elif isinstance(size, tuple) and len(size) == count:
            new = [old if s is None else (s if isinstance(s, Dim) else None) for s, old in zip(size, sizes)]
        else:
            new = [None] * count
        return ops.spatial(x, count, channels, new, call.origin())
    return rule


for _count in (1, 2, 3):
    FUNCTIONS[f"{F}max_pool{_count}d"] = _f_pool(_count, False)
    FUNCTIONS[f"{F}avg_pool{_count}d"] = _f_pool(_count, True)
    FUNCTIONS[f"torch.max_pool{_count}d"] = _f_pool(_count, False)
    FUNCTIONS[f"torch.avg_pool{_count}d"] = _f_pool(_count, True)
    FUNCTIONS[f"{F}adaptive_avg_pool{_count}d"] = _f_adaptive(_count)
    FUNCTIONS[f"{F}adaptive_max_pool{_count}d"] = _f_adaptive(_count)


@function(F + "interpolate", F + "upsample")
def _interpolate(call: Call) -> Value:
    x = call.arg(0, "input")
    if not isinstance(x, Tensor):
        return UNKNOWN
    size = call.arg(1, "size")
    scale = call.arg(2, "scale_factor")
    size_param = param_of(size) if size is not None and size is not NONE else None
    scale_param = _scale_param(scale)
    if size_param is None and scale_param is None:
        return Tensor(x.dims[:2] + (None,) * (len(x.dims) - 2), x.variadic, x.dtype, call.origin()) \
            if x.rank is not None and x.rank >= 3 else UNKNOWN
    return interpolate(x, size_param, scale_param, call.origin())


def _scale_param(value: Value | None):
    """An integral scale factor as a Dim (2 or 2.0); None when absent or fractional/unknown."""
    if value is None or value is NONE:
        return None
    parameter = param_of(value)
    if isinstance(parameter, Dim):
        return parameter
    if isinstance(parameter, tuple) and all(isinstance(p, Dim) for p in parameter):
        return parameter
    return UNKNOWN


@function(F + "pad")
def _pad(call: Call) -> Value:
    x, padding = call.arg(0, "input"), param_of(call.arg(1, "pad") or UNKNOWN)
    if not isinstance(x, Tensor) or not isinstance(padding, tuple):
        return UNKNOWN
    return pad(x, padding, call.origin())


@function(F + "scaled_dot_product_attention")
def _sdpa(call: Call) -> Value:
    query, key, value = call.arg(0, "query"), call.arg(1, "key"), call.arg(2, "value")
    if not all(isinstance(t, Tensor) for t in (query, key, value)) or not query.dims or not value.dims:
        return UNKNOWN
    if ops.surely_differ(query.dims[-1], key.dims[-1] if key.dims else None):
        call.fail(f"`{call.site.callee}` compares queries {describe(query)} with keys {describe(key)}: "
                  "their last dims differ")
        return UNKNOWN
    return Tensor(query.dims[:-1] + (value.dims[-1],), query.variadic, query.dtype, call.origin())


@function(F + "embedding")
def _f_embedding(call: Call) -> Value:
    x, weight = call.arg(0, "input"), call.arg(1, "weight")
    if not isinstance(x, Tensor) or not isinstance(weight, Tensor) or weight.rank != 2:
        return UNKNOWN
    return Tensor(x.dims + (weight.dims[1],), x.variadic, weight.dtype, call.origin())


@function(F + "one_hot")
def _one_hot(call: Call) -> Value:
    x = call.arg(0, "tensor")
    classes = dim_of(call.arg(1, "num_classes", Int(Dim.const(-1))))
    if not isinstance(x, Tensor):
        return UNKNOWN
    if classes is not None and classes.as_int() is not None and classes.as_int() < 0:
        classes = None
    return Tensor(x.dims + (classes,), x.variadic, "long", call.origin())


@function(F + "layer_norm", "torch.layer_norm", F + "rms_norm")
def _f_layer_norm(call: Call) -> Value:
    x, shape = call.arg(0, "input"), sizes_from([call.arg(1, "normalized_shape") or UNKNOWN])
    if not isinstance(x, Tensor):
        return UNKNOWN
    if shape is not None and None not in shape and WILDCARD not in shape:
        for own, wanted in zip(reversed(x.dims), reversed(shape)):
            if ops.surely_differ(own, wanted):
                call.fail(f"`{call.site.callee}` normalises {describe(x)} over its last dims, which must be "
                          f"[{', '.join(s.render() for s in shape)}]")
                return UNKNOWN
    return x


@function(F + "glu")
def _f_glu(call: Call) -> Value:
    x, dim = call.arg(0, "input"), int_of(call.arg(1, "dim", Int(Dim.const(-1))))
    if not isinstance(x, Tensor) or dim is None:
        return UNKNOWN
    size = x.dim(dim)
    return ops.resize_dim(x, dim, size.floordiv(Dim.const(2)) if size is not None else None, call.origin())


@function(F + "pixel_shuffle", "torch.pixel_shuffle")
def _f_pixel_shuffle(call: Call) -> Value:
    x, factor = call.arg(0, "input"), dim_of(call.arg(1, "upscale_factor"))
    if not isinstance(x, Tensor) or x.rank is None or x.rank < 3 or factor is None:
        return UNKNOWN
    c, h, w = x.dims[-3:]
    channels = c.divide_exactly(factor * factor) if c is not None else None
    return Tensor(x.dims[:-3] + (channels, h * factor if h is not None else None,
                                 w * factor if w is not None else None), False, x.dtype, call.origin())


@function(F + "cosine_similarity", "torch.cosine_similarity")
def _cosine(call: Call) -> Value:
    a, b = tensor_of(call.arg(0, "x1")), tensor_of(call.arg(1, "x2"))
    dim = int_of(call.arg(2, "dim", Int(ONE)))
    if a is None or b is None or dim is None:
        return UNKNOWN
    joined = broadcast_operands(call, [a, b])
    return ops.reduce(joined, [dim], False, call.origin()) if joined is not None else UNKNOWN


def _f_loss(class_dim: bool):
    def rule(call: Call) -> Value:
        reduction = call.kwargs.get("reduction")
        value = reduction.value if isinstance(reduction, Str) else ("mean" if reduction is None else UNKNOWN)
        return loss_result(call.site, value, call.arg(0, "input") or UNKNOWN, call.arg(1, "target") or UNKNOWN,
                           class_dim)
    return rule


for _name in ("cross_entropy", "nll_loss"):
    FUNCTIONS[F + _name] = _f_loss(True)
for _name in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
              "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss", "poisson_nll_loss"):
    FUNCTIONS[F + _name] = _f_loss(False)


def math_result(name: str, args: list[Value]) -> Value:
    """`math.sqrt(d)`, `math.ceil(x / 2)`, ...: an int where that is exact, else a float."""
    if name in ("ceil", "floor", "trunc", "isqrt", "gcd", "prod", "comb", "factorial"):
        if name == "gcd" and all(int_of(a) is not None for a in args):
            import math as _math
            return Int(Dim.const(_math.gcd(*(int_of(a) for a in args))))  # type: ignore[arg-type]
        if len(args) == 1 and isinstance(args[0], Int):
            return args[0]
        return Int(None)
    return NUM
