"""Element-wise operations: the same shape (`x.relu()`), another dtype (`x.float()`,
`x.isnan()`), or the broadcast of the operands (`x.add(y)`, `x.eq(y)`, `torch.where`)."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.functions.arguments import dtype_of, tensor_of
from torch_lsp.shapes.functions.registry import TORCH, Call, function, method
from torch_lsp.shapes.ops import ShapeError, describe
from torch_lsp.shapes.values import NONE, UNKNOWN, Bool, Opaque, Str, Tensor, TorchRef, Value


@method(
    "abs", "neg", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan",
    "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid", "relu", "sign", "floor", "ceil", "round", "trunc",
    "frac", "reciprocal", "square", "erf", "erfc", "erfinv", "clamp", "clip", "clamp_min", "clamp_max",
    "nan_to_num", "logit", "detach", "clone", "contiguous", "cpu", "cuda", "requires_grad_", "pin_memory",
    "cumsum", "cumprod", "logcumsumexp", "flip", "fliplr", "flipud", "roll", "tril",
    "triu", "relu_", "sigmoid_", "tanh_", "exp_", "log_", "abs_", "neg_", "sqrt_", "clamp_", "clip_", "fill_",
    "zero_", "normal_", "uniform_", "bernoulli", "bernoulli_", "copy_", "detach_",
    "share_memory_", "record_stream", "softplus", "gelu", "silu", "mish", "hardtanh", "elu", "leaky_relu",
    "positive", "conj", "resolve_conj", "resolve_neg", "index_fill", "index_fill_", "index_add", "index_add_",
    "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce", "index_copy", "index_copy_",
    "masked_scatter", "put_", "lerp", "lerp_", "nan_to_num_", "add_", "sub_", "mul_", "div_", "pow_",
    "float_power", "sgn", "deg2rad", "rad2deg", "digamma", "lgamma", "polygamma", "i0", "sinc", "heaviside",
    "clone_", "retain_grad", "coalesce", "exponential_", "geometric_", "log_normal_", "cauchy_", "random_",
    "dropout", "requires_grad", "align_to", "rename", "refine_names", "data_ptr_like",
    also_torch=True,
)
# in-place forms of the broadcasting operations below: the result is `x` itself
@method("subtract_", "multiply_", "divide_", "true_divide_", "floor_divide_", "remainder_", "fmod_", "maximum_",
        "minimum_", "fmax_", "fmin_", "atan2_", "arctan2_", "hypot_", "bitwise_and_", "bitwise_or_",
        "bitwise_xor_", "copysign_", "xlogy_", "rsub_", "ldexp_", "logaddexp_")
def same_shape(call: Call, x: Tensor) -> Value:
    return x


def _cast(dtype: str | None):
    def rule(call: Call, x: Tensor) -> Value:
        return x.with_dims(x.dims, dtype=dtype)
    return rule


method("float", "double", "half", "bfloat16")(_cast("float"))
method("long", "int", "short")(_cast("long"))
method("byte", "char")(_cast(None))
method("bool")(_cast("bool"))


@method("to", "type")
def _to(call: Call, x: Tensor) -> Value:
    """`x.to(torch.float16)`, `x.to(other)`, `x.to(device)`: a dtype this pass cannot read
    (`x.to(self.dtype)`, `x.type(kind)`) makes the result's dtype unknown."""
    for value in list(call.args) + [call.kwargs.get("dtype")]:
        if isinstance(value, Tensor):
            return x.with_dims(x.dims, dtype=value.dtype)
        kind = dtype_of(value)
        if kind is not None:
            return x.with_dims(x.dims, dtype=kind)
    if "dtype" in call.kwargs or any(not _surely_no_dtype(value) for value in call.args):
        return x.with_dims(x.dims, dtype=None)
    return x


def _surely_no_dtype(value: Value) -> bool:
    """A `to()` argument that is a device or a flag, never a dtype: a string (`"cuda"`), a bool,
    `torch.device(...)`, or a name that says device (`device`, `self.device`, `args.dev`)."""
    if isinstance(value, (Str, Bool)):
        return True
    if isinstance(value, TorchRef):
        return value.qualname.rsplit(".", 1)[-1] == "device"
    if isinstance(value, Opaque):
        return "dev" in value.name.rsplit(".", 1)[-1].lower()
    return False


@method("type_as")
def _type_as(call: Call, x: Tensor) -> Value:
    other = call.arg(0, "other")
    return x.with_dims(x.dims, dtype=other.dtype if isinstance(other, Tensor) else None)


@method("isnan", "isinf", "isfinite", "logical_not", also_torch=True)
@method("isneginf", "isposinf", "signbit")
def _to_bool(call: Call, x: Tensor) -> Value:
    return x.with_dims(x.dims, dtype="bool")


# ------------------------------------------------------------- broadcasting
def broadcast_operands(call: Call, tensors: list[Tensor], what: str | None = None) -> Tensor | None:
    try:
        return ops.broadcast(tensors, call.origin())
    except ShapeError:
        call.fail(ops.broadcast_error(tensors, what or f"`{call.site.callee}`"))
        return None


def binary(dtype: str | None):
    """`x.op(other)`: the broadcast shape; `dtype` "keep" keeps the operands' dtype."""
    def rule(call: Call, x: Tensor) -> Value:
        other = tensor_of(call.arg(0, "other"))
        if other is None:
            return UNKNOWN
        result = broadcast_operands(call, [x, other])
        if result is None:
            return UNKNOWN
        return result.with_dims(result.dims, dtype=dtype) if dtype != "keep" else result
    return rule


method("add", "sub", "subtract", "mul", "multiply", "floor_divide",
       "remainder", "fmod", "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot",
       "bitwise_and", "bitwise_or", "bitwise_xor", "copysign", "xlogy", "rsub", "ldexp", "logaddexp",
       also_torch=True)(binary("keep"))
method("eq", "ne", "lt", "le", "gt", "ge", "greater", "less", "greater_equal", "less_equal", "not_equal",
       "logical_and", "logical_or", "logical_xor", "isclose", also_torch=True)(binary("bool"))


@method("div", "divide", "true_divide", also_torch=True)
def _divide(call: Call, x: Tensor) -> Value:
    """True division makes floating point whatever divides (`torch.div(indices, 100)` of int64
    indices is float); a `rounding_mode` ("floor", "trunc") keeps the operands' kind."""
    mode = call.kwargs.get("rounding_mode")
    if mode is None or mode is NONE:
        result = binary("float")(call, x)
        if isinstance(result, Tensor) and x.dtype != "float":
            return result.with_dims(result.dims, origin=call.origin())  # the division made it floating
        return result
    return binary("keep" if isinstance(mode, Str) else None)(call, x)


@method("masked_fill", "masked_fill_", also_torch=True)
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


@function("where", within=(TORCH,))
def _where(call: Call) -> Value:
    if len(call.args) == 1 and not call.kwargs:
        return UNKNOWN
    operands = [tensor_of(call.arg(i, name)) for i, name in enumerate(("condition", "input", "other"))]
    if any(o is None for o in operands):
        return UNKNOWN
    result = broadcast_operands(call, operands, "`torch.where`")  # type: ignore[arg-type]
    if result is None:
        return UNKNOWN
    # torch promotes the two branches (`torch.where(mask, tokens, 0.0)` of int64 tokens is float)
    kind = ops.common_dtype(operands[1:])  # type: ignore[arg-type]
    promoted = kind is not None and kind != operands[1].dtype  # type: ignore[union-attr]
    return result.with_dims(result.dims, dtype=kind, origin=call.origin() if promoted else None)
