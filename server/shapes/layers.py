"""`torch.nn` layers: constructor signatures, forward shape rules, parameter counts.

A layer is built from its constructor call into a `Layer` value that keeps the
arguments deciding its shapes (`Linear(n_embd, 3*n_embd)`).  Calling it applies the
kind's `forward` rule through a `Site` (the interpreter's view of the call), which
also receives definite mismatches (`site.fail`) and backward requirements on
inputs nothing was known about (`site.require`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

from server.shapes import ops
from server.shapes.dims import Dim, product
from server.shapes.ops import ONE, ShapeError, describe, surely_differ
from server.shapes.values import (
    NONE, UNKNOWN, UNKNOWN_TENSOR, Bool, Int, Layer, ListValue, Num, Opaque, Origin, Str, Tensor, TupleValue, Value,
    render_dim,
)


class Site(Protocol):
    """What a layer or op rule may ask of the interpreter at one call."""

    callee: str  # source text of what is called: "self.fc"

    def origin(self, text: str) -> Origin: ...

    def here(self) -> Origin: ...

    def layer_origin(self, layer: "Layer") -> Origin: ...

    def fail(self, message: str) -> None: ...

    def require(self, value: Value, needed: Tensor) -> Tensor: ...

    def call(self, callee: Value, args: list[Value]) -> Value: ...


Forward = Callable[[Site, "Layer", list, dict], Value]
ParamCount = Callable[["Layer"], "Dim | None"]


@dataclass(eq=False)
class LayerKind:
    name: str
    signature: tuple[tuple[str, Any], ...]  # (parameter, default); REQUIRED when none
    forward: Forward
    describe: Callable[["Layer"], str]
    param_count: ParamCount = lambda layer: Dim()
    weights: Callable[["Layer"], dict[str, Tensor]] = lambda layer: {}
    field_names: dict[str, str] = field(default_factory=dict)  # attribute -> parameter (`in_features`)

    def __post_init__(self) -> None:
        self.parameter_names = tuple(n for n, _ in self.signature)

    def __repr__(self) -> str:
        return f"LayerKind({self.name})"


REQUIRED = object()
KINDS: dict[str, LayerKind] = {}


# --------------------------------------------------------------- parameters
def param_of(value: Value) -> Any:
    """The constructor argument as a plain parameter: Dim, bool, str, float, None, a tuple, or UNKNOWN."""
    if isinstance(value, Int):
        return value.dim if value.dim is not None else UNKNOWN
    if isinstance(value, Opaque):
        return value.dim if value.dim is not None else UNKNOWN
    if isinstance(value, Bool):
        return value.value if value.value is not None else UNKNOWN
    if isinstance(value, Str):
        return value.value
    if value is NONE:
        return None
    if isinstance(value, TupleValue):
        return tuple(param_of(item) for item in value.items)
    if isinstance(value, ListValue) and value.exact:
        return tuple(param_of(item) for item in value.items)
    if isinstance(value, Num):
        return 0.5  # a float argument (dropout, eps): its value never decides a shape
    return UNKNOWN


def bind_params(kind: LayerKind, args: Sequence[Value], kwargs: dict[str, Value]) -> tuple | None:
    """(parameter, value) pairs for every parameter of the signature, or None if required ones are missing."""
    bound: dict[str, Any] = {}
    names = kind.parameter_names
    for name, value in zip(names, args):
        bound[name] = param_of(value)
    for name, value in kwargs.items():
        if name in names:
            bound[name] = param_of(value)
    params = []
    for name, default in kind.signature:
        if name in bound:
            params.append((name, bound[name]))
        elif default is REQUIRED:
            params.append((name, UNKNOWN))
        else:
            params.append((name, default))
    return tuple(params)


def dim_param(layer: Layer, name: str) -> Dim | None:
    value = layer.get(name)
    return value if isinstance(value, Dim) else None


def tuple_param(layer: Layer, name: str, count: int) -> tuple[Dim | None, ...] | None:
    value = layer.get(name)
    if isinstance(value, Dim):
        return (value,) * count
    if isinstance(value, tuple) and len(value) == count:
        return tuple(v if isinstance(v, Dim) else None for v in value)
    return None


def flag(layer: Layer, name: str) -> bool | None:
    value = layer.get(name)
    return value if isinstance(value, bool) else None


def text(value: Any) -> str:
    if isinstance(value, Dim):
        return value.render()
    if isinstance(value, tuple):
        parts = [text(v) for v in value]
        return parts[0] if len(set(parts)) == 1 else "(" + ", ".join(parts) + ")"
    if value is UNKNOWN:
        return "?"
    return repr(value)


def input_tensor(site: Site, args: list) -> Tensor | None:
    if not args:
        return None
    value = args[0]
    if isinstance(value, Tensor):
        return value
    if isinstance(value, Opaque) or value is UNKNOWN:
        return UNKNOWN_TENSOR
    return None


def register(kind: LayerKind, *aliases: str) -> LayerKind:
    KINDS[kind.name] = kind
    for alias in aliases:
        KINDS[alias] = kind
    return kind


def mismatch(site: Site, layer: Layer, expectation: str, got: Tensor) -> None:
    site.fail(f"`{site.callee}` is {layer.kind.describe(layer)}, which expects {expectation}, "
              f"but it is given {describe(got)}")


def wrong_last_dim(site: Site, layer: Layer, x: Tensor, size, owner: str = "the") -> bool:
    """Report (and say so) when `x`'s last dim surely is not the `size` features the layer takes."""
    if x.dims and surely_differ(x.dims[-1], size):
        mismatch(site, layer, f"{render_dim(size)} features in {owner} last dim", x)
        return True
    return False


# ------------------------------------------------------------------ Linear
def _linear_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    in_f, out_f = dim_param(layer, "in_features"), dim_param(layer, "out_features")
    if wrong_last_dim(site, layer, x, in_f, owner="its"):
        return UNKNOWN
    if in_f is not None and not x.dims:
        x = site.require(args[0], Tensor((in_f,), True))
    return ops.linear(x, in_f, out_f, site.layer_origin(layer))


def _bias_count(layer: Layer, size: Dim | None) -> Dim | None:
    bias = layer.get("bias", True)
    if bias is False:
        return Dim()
    return size if bias is True else None


def _sum_counts(*counts: Dim | None) -> Dim | None:
    total = Dim()
    for count in counts:
        if count is None:
            return None
        total = total + count
    return total


def _mul(*dims: Dim | None) -> Dim | None:
    if any(d is None for d in dims):
        return None
    return product(dims)  # type: ignore[arg-type]


register(LayerKind(
    "Linear", (("in_features", REQUIRED), ("out_features", REQUIRED), ("bias", True)),
    _linear_forward,
    lambda l: f"Linear({text(l.get('in_features'))} → {text(l.get('out_features'))})",
    lambda l: _sum_counts(_mul(dim_param(l, "in_features"), dim_param(l, "out_features")),
                          _bias_count(l, dim_param(l, "out_features"))),
    lambda l: {"weight": Tensor((dim_param(l, "out_features"), dim_param(l, "in_features"))),
               "bias": Tensor((dim_param(l, "out_features"),))},
    {"in_features": "in_features", "out_features": "out_features"},
))


def _lazy_linear_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    return ops.linear(x, None, dim_param(layer, "out_features"),
                      site.layer_origin(layer))


register(LayerKind(
    "LazyLinear", (("out_features", REQUIRED), ("bias", True)), _lazy_linear_forward,
    lambda l: f"LazyLinear(→ {text(l.get('out_features'))})", lambda l: None,
))


def _bilinear_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    if len(args) < 2 or not all(isinstance(a, Tensor) for a in args[:2]):
        return UNKNOWN
    x1, x2 = args[0], args[1]
    for tensor, name in ((x1, "in1_features"), (x2, "in2_features")):
        if tensor.dims and surely_differ(tensor.dims[-1], dim_param(layer, name)):
            mismatch(site, layer, f"{render_dim(dim_param(layer, name))} features in the last dim", tensor)
            return UNKNOWN
    return ops.linear(x1, None, dim_param(layer, "out_features"),
                      site.layer_origin(layer))


register(LayerKind(
    "Bilinear", (("in1_features", REQUIRED), ("in2_features", REQUIRED), ("out_features", REQUIRED), ("bias", True)),
    _bilinear_forward,
    lambda l: f"Bilinear({text(l.get('in1_features'))}, {text(l.get('in2_features'))} → {text(l.get('out_features'))})",
    lambda l: _sum_counts(_mul(dim_param(l, "in1_features"), dim_param(l, "in2_features"), dim_param(l, "out_features")),
                          _bias_count(l, dim_param(l, "out_features"))),
))


# -------------------------------------------------------------- same shape
def _same_shape(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    return x


SAME_SHAPE_LAYERS = (
    "ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid",
    "Tanh", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink", "Softshrink",
    "Hardshrink", "LogSigmoid", "Threshold", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
    "FeatureAlphaDropout", "Identity", "Softmax", "Softmin", "LogSoftmax", "Softmax2d",
)
for _name in SAME_SHAPE_LAYERS:
    register(LayerKind(_name, (), _same_shape, (lambda n: lambda l: f"{n}()")(_name)))
# Softmax and friends take `dim`; keep it so the hover shows it.
for _name in ("Softmax", "Softmin", "LogSoftmax"):
    register(LayerKind(_name, (("dim", None),), _same_shape,
                       (lambda n: lambda l: f"{n}(dim={text(l.get('dim'))})")(_name)))


def _glu_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    dim = layer.get("dim", -1)
    if not isinstance(dim, Dim) or dim.as_int() is None or not x.has_shape:
        return UNKNOWN
    size = x.dim(dim.as_int())
    half = size.floordiv(Dim.const(2)) if size is not None else None
    return ops.resize_dim(x, dim.as_int(), half, site.layer_origin(layer))


register(LayerKind("GLU", (("dim", Dim.const(-1)),), _glu_forward, lambda l: "GLU()"))


# ------------------------------------------------------------ convolution
def _conv_kind(count: int, transposed: bool) -> LayerKind:
    name = f"ConvTranspose{count}d" if transposed else f"Conv{count}d"
    if transposed:
        signature = (("in_channels", REQUIRED), ("out_channels", REQUIRED), ("kernel_size", REQUIRED),
                     ("stride", ONE), ("padding", Dim()), ("output_padding", Dim()), ("groups", ONE),
                     ("bias", True), ("dilation", ONE))
    else:
        signature = (("in_channels", REQUIRED), ("out_channels", REQUIRED), ("kernel_size", REQUIRED),
                     ("stride", ONE), ("padding", Dim()), ("dilation", ONE), ("groups", ONE), ("bias", True),
                     ("padding_mode", "zeros"))

    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None:
            return UNKNOWN
        shaped = ops.spatial_input(x, count)
        in_c, out_c = dim_param(layer, "in_channels"), dim_param(layer, "out_channels")
        if shaped is None:
            if x.rank is not None:
                mismatch(site, layer, f"a {count + 1}-d or {count + 2}-d input", x)
            return UNKNOWN
        channels, sizes = shaped
        if surely_differ(channels, in_c):
            mismatch(site, layer, f"{render_dim(in_c)} input channels in dim {-(count + 1)}", x)
            return UNKNOWN
        if channels is None and in_c is not None and x.rank is None:
            x = site.require(args[0], Tensor((in_c,) + (None,) * count, True))
        out_sizes = _conv_sizes(layer, sizes, count, transposed)
        return ops.spatial(x, count, out_c, out_sizes, site.layer_origin(layer))

    def weights(layer: Layer) -> dict[str, Tensor]:
        kernel = tuple_param(layer, "kernel_size", count) or (None,) * count
        in_c, out_c, groups = dim_param(layer, "in_channels"), dim_param(layer, "out_channels"), dim_param(layer, "groups")
        first, second = (in_c, out_c) if transposed else (out_c, in_c)
        per_group = second.floordiv(groups) if second is not None and groups is not None else None
        return {"weight": Tensor((first, per_group) + kernel), "bias": Tensor((out_c,))}

    def count_params(layer: Layer) -> Dim | None:
        shape = weights(layer)["weight"]
        return _sum_counts(_mul(*shape.dims), _bias_count(layer, dim_param(layer, "out_channels")))

    return register(LayerKind(name, signature, forward, describe_conv, count_params, weights,
                              {"in_channels": "in_channels", "out_channels": "out_channels"}))


def _conv_sizes(layer: Layer, sizes: list, count: int, transposed: bool) -> list[Dim | None]:
    kernel = tuple_param(layer, "kernel_size", count)
    stride = tuple_param(layer, "stride", count)
    dilation = tuple_param(layer, "dilation", count)
    padding_value = layer.get("padding")
    if padding_value == "same":
        return list(sizes)
    padding = (Dim(),) * count if padding_value == "valid" else tuple_param(layer, "padding", count)
    if None in (kernel, stride, dilation, padding):
        return [None] * count
    if transposed:
        extra = tuple_param(layer, "output_padding", count)
        if extra is None:
            return [None] * count
        return [ops.conv_transpose_output(s, k, st, p, d, e)
                for s, k, st, p, d, e in zip(sizes, kernel, stride, padding, dilation, extra)]
    return [ops.conv_output(s, k, st, p, d) for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]


def describe_conv(layer: Layer) -> str:
    parts = [f"{text(layer.get('in_channels'))} → {text(layer.get('out_channels'))}",
             f"kernel {text(layer.get('kernel_size'))}"]
    for name, default in (("stride", ONE), ("padding", Dim()), ("dilation", ONE), ("groups", ONE)):
        value = layer.get(name)
        if value != default and value != (default,) * 3 and not (isinstance(value, tuple) and set(value) == {default}):
            parts.append(f"{name} {text(value)}")
    return f"{layer.kind.name}({', '.join(parts)})"


for _count in (1, 2, 3):
    _conv_kind(_count, False)
    _conv_kind(_count, True)


# ---------------------------------------------------------------- pooling
def _pool_kind(count: int, average: bool) -> LayerKind:
    name = f"{'Avg' if average else 'Max'}Pool{count}d"
    if average:
        signature = (("kernel_size", REQUIRED), ("stride", None), ("padding", Dim()), ("ceil_mode", False),
                     ("count_include_pad", True), ("divisor_override", None))
    else:
        signature = (("kernel_size", REQUIRED), ("stride", None), ("padding", Dim()), ("dilation", ONE),
                     ("return_indices", False), ("ceil_mode", False))

    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None:
            return UNKNOWN
        shaped = ops.spatial_input(x, count)
        if shaped is None:
            return UNKNOWN
        channels, sizes = shaped
        kernel = tuple_param(layer, "kernel_size", count)
        stride = kernel if layer.get("stride") is None else tuple_param(layer, "stride", count)
        padding = tuple_param(layer, "padding", count)
        dilation = (ONE,) * count if average else tuple_param(layer, "dilation", count)
        ceil_mode = flag(layer, "ceil_mode")
        if None in (kernel, stride, padding, dilation) or ceil_mode is None:
            out = [None] * count
        else:
            out = [ops.pool_output(s, k, st, p, d, ceil_mode)
                   for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]
        result = ops.spatial(x, count, channels, out, site.layer_origin(layer))
        if flag(layer, "return_indices"):
            return TupleValue((result, result.with_dims(result.dims, dtype="long")))
        return result

    def describe_pool(layer: Layer) -> str:
        parts = [text(layer.get("kernel_size"))]
        if layer.get("stride") is not None:
            parts.append(f"stride {text(layer.get('stride'))}")
        if layer.get("padding") not in (Dim(), None):
            parts.append(f"padding {text(layer.get('padding'))}")
        return f"{name}({', '.join(parts)})"

    return register(LayerKind(name, signature, forward, describe_pool))


def _adaptive_kind(count: int, average: bool) -> LayerKind:
    name = f"Adaptive{'Avg' if average else 'Max'}Pool{count}d"
    signature = (("output_size", REQUIRED),) + ((("return_indices", False),) if not average else ())

    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None:
            return UNKNOWN
        shaped = ops.spatial_input(x, count)
        if shaped is None:
            return UNKNOWN
        channels, sizes = shaped
        out = _adaptive_sizes(layer.get("output_size"), sizes, count)
        result = ops.spatial(x, count, channels, out, site.layer_origin(layer))
        if flag(layer, "return_indices"):
            return TupleValue((result, result.with_dims(result.dims, dtype="long")))
        return result

    return register(LayerKind(name, signature, forward, lambda l: f"{name}({text(l.get('output_size'))})"))


def _adaptive_sizes(output_size: Any, sizes: list, count: int) -> list[Dim | None]:
    if isinstance(output_size, Dim):
        return [output_size] * count
    if isinstance(output_size, tuple) and len(output_size) == count:
        return [size if o is None else (o if isinstance(o, Dim) else None) for o, size in zip(output_size, sizes)]
    return [None] * count


for _count in (1, 2, 3):
    _pool_kind(_count, False)
    _pool_kind(_count, True)
    _adaptive_kind(_count, False)
    _adaptive_kind(_count, True)


# ----------------------------------------------------------- normalisation
def _channel_norm_kind(name: str, affine_default: bool) -> LayerKind:
    """BatchNorm/InstanceNorm: input (N, C, *spatial) with C = num_features."""

    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None:
            return UNKNOWN
        features = dim_param(layer, "num_features")
        channel = _channel_dim(x, name)
        if channel is not None and surely_differ(channel, features):
            mismatch(site, layer, f"{render_dim(features)} channels in dim 1", x)
            return UNKNOWN
        return x

    return register(LayerKind(
        name, (("num_features", REQUIRED), ("eps", 1e-5), ("momentum", 0.1), ("affine", affine_default),
               ("track_running_stats", True)),
        forward, lambda l: f"{name}({text(l.get('num_features'))})",
        lambda l: _mul(Dim.const(2), dim_param(l, "num_features")) if l.get("affine") is True else (
            Dim() if l.get("affine") is False else None),
        lambda l: {"weight": Tensor((dim_param(l, "num_features"),)), "bias": Tensor((dim_param(l, "num_features"),))},
        {"num_features": "num_features"},
    ))


def _channel_dim(x: Tensor, name: str) -> Dim | None:
    """The channel size a batch/instance norm checks: dim 1 of a batched input."""
    if x.rank is None:
        return None
    if name == "BatchNorm1d":
        return x.dims[1] if x.rank in (2, 3) else None
    if name.startswith("BatchNorm"):
        wanted = {"BatchNorm2d": 4, "BatchNorm3d": 5}[name]
        return x.dims[1] if x.rank == wanted else None
    spatial = int(name[-2])
    if x.rank == spatial + 2:
        return x.dims[1]
    if x.rank == spatial + 1:
        return x.dims[0]
    return None


for _name in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d"):
    _channel_norm_kind(_name, True)
for _name in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"):
    _channel_norm_kind(_name, False)


def _layer_norm_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    shape = layer.get("normalized_shape")
    normalized = (shape,) if isinstance(shape, Dim) else shape if isinstance(shape, tuple) else None
    if normalized is None:
        return x
    normalized = tuple(d if isinstance(d, Dim) else None for d in normalized)
    if x.rank is not None and x.rank < len(normalized):
        return x
    for own, wanted in zip(reversed(x.dims), reversed(normalized)):
        if surely_differ(own, wanted):
            last = ", ".join(render_dim(d) for d in normalized)
            mismatch(site, layer, f"its last dims to be [{last}]", x)
            return UNKNOWN
    if not x.dims:
        return site.require(args[0], Tensor(normalized, True))
    return x


def _normalized_count(layer: Layer) -> Dim | None:
    shape = layer.get("normalized_shape")
    dims = (shape,) if isinstance(shape, Dim) else shape if isinstance(shape, tuple) else None
    if dims is None or not all(isinstance(d, Dim) for d in dims):
        return None
    return product(dims)


def _layer_norm_params(layer: Layer) -> Dim | None:
    if layer.get("elementwise_affine") is False:
        return Dim()
    size = _normalized_count(layer)
    if size is None:
        return None
    return size.scale(2) if layer.get("bias", True) is not False else size


def _normalized_weights(layer: Layer) -> dict[str, Tensor]:
    shape = layer.get("normalized_shape")
    dims = (shape,) if isinstance(shape, Dim) else shape if isinstance(shape, tuple) else None
    if dims is None:
        return {}
    tensor = Tensor(tuple(d if isinstance(d, Dim) else None for d in dims))
    return {"weight": tensor, "bias": tensor}


register(LayerKind(
    "LayerNorm", (("normalized_shape", REQUIRED), ("eps", 1e-5), ("elementwise_affine", True), ("bias", True)),
    _layer_norm_forward, lambda l: f"LayerNorm({text(l.get('normalized_shape'))})", _layer_norm_params,
    _normalized_weights,
))
register(LayerKind(
    "RMSNorm", (("normalized_shape", REQUIRED), ("eps", None), ("elementwise_affine", True)),
    _layer_norm_forward, lambda l: f"RMSNorm({text(l.get('normalized_shape'))})",
    lambda l: Dim() if l.get("elementwise_affine") is False else _normalized_count(l),
    _normalized_weights,
))


def _group_norm_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    channels = dim_param(layer, "num_channels")
    if x.rank is not None and x.rank >= 2 and surely_differ(x.dims[1], channels):
        mismatch(site, layer, f"{render_dim(channels)} channels in dim 1", x)
        return UNKNOWN
    return x


register(LayerKind(
    "GroupNorm", (("num_groups", REQUIRED), ("num_channels", REQUIRED), ("eps", 1e-5), ("affine", True)),
    _group_norm_forward, lambda l: f"GroupNorm({text(l.get('num_groups'))} groups, {text(l.get('num_channels'))})",
    lambda l: _mul(Dim.const(2), dim_param(l, "num_channels")) if l.get("affine") is not False else Dim(),
    lambda l: {"weight": Tensor((dim_param(l, "num_channels"),)), "bias": Tensor((dim_param(l, "num_channels"),))},
))


# --------------------------------------------------------------- embedding
def _embedding_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    origin = site.layer_origin(layer)
    return Tensor(x.dims + (dim_param(layer, "embedding_dim"),), x.variadic, "float", origin)


register(LayerKind(
    "Embedding", (("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED), ("padding_idx", None)),
    _embedding_forward,
    lambda l: f"Embedding({text(l.get('num_embeddings'))}, {text(l.get('embedding_dim'))})",
    lambda l: _mul(dim_param(l, "num_embeddings"), dim_param(l, "embedding_dim")),
    lambda l: {"weight": Tensor((dim_param(l, "num_embeddings"), dim_param(l, "embedding_dim")))},
    {"num_embeddings": "num_embeddings", "embedding_dim": "embedding_dim"},
))


# ----------------------------------------------------------- reshaping layers
def _flatten_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    start, end = layer.get("start_dim"), layer.get("end_dim")
    if x is None or not isinstance(start, Dim) or not isinstance(end, Dim):
        return UNKNOWN
    return ops.flatten(x, start.as_int(), end.as_int(), site.layer_origin(layer))


register(LayerKind(
    "Flatten", (("start_dim", ONE), ("end_dim", Dim.const(-1))), _flatten_forward,
    lambda l: f"Flatten({text(l.get('start_dim'))}, {text(l.get('end_dim'))})",
))


def sizes_of(value: Any) -> list | None:
    """A size tuple parameter as ops sizes (Dim, None unknown, WILDCARD for -1)."""
    if not isinstance(value, tuple):
        return None
    sizes: list = []
    for item in value:
        if isinstance(item, Dim):
            sizes.append(ops.WILDCARD if item.as_int() == -1 else item)
        else:
            sizes.append(None)
    return sizes


def _unflatten_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    dim, sizes = layer.get("dim"), sizes_of(layer.get("unflattened_size"))
    if x is None or not isinstance(dim, Dim) or sizes is None:
        return UNKNOWN
    return ops.unflatten(x, dim.as_int(), sizes, site.layer_origin(layer))


register(LayerKind(
    "Unflatten", (("dim", REQUIRED), ("unflattened_size", REQUIRED)), _unflatten_forward,
    lambda l: f"Unflatten({text(l.get('dim'))}, {text(l.get('unflattened_size'))})",
))


def _upsample_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    return interpolate(x, layer.get("size"), layer.get("scale_factor"),
                       site.layer_origin(layer))


def interpolate(x: Tensor, size: Any, scale: Any, origin: Origin) -> Tensor:
    """`F.interpolate` / `nn.Upsample`: spatial dims (all but the first two) resized."""
    if x.rank is None or x.rank < 3:
        return UNKNOWN_TENSOR
    count = x.rank - 2
    if size is not None:
        sizes = (size,) * count if isinstance(size, Dim) else size if isinstance(size, tuple) else None
        if sizes is None or len(sizes) != count:
            return Tensor(x.dims[:2] + (None,) * count, False, x.dtype, origin)
        return Tensor(x.dims[:2] + tuple(s if isinstance(s, Dim) else None for s in sizes), False, x.dtype, origin)
    scales = (scale,) * count if not isinstance(scale, tuple) else scale
    if len(scales) != count:
        return Tensor(x.dims[:2] + (None,) * count, False, x.dtype, origin)
    out = []
    for dim, factor in zip(x.dims[2:], scales):
        out.append(dim * factor if isinstance(factor, Dim) and dim is not None else None)
    return Tensor(x.dims[:2] + tuple(out), False, x.dtype, origin)


register(LayerKind(
    "Upsample", (("size", None), ("scale_factor", None), ("mode", "nearest"), ("align_corners", None)),
    _upsample_forward,
    lambda l: f"Upsample({'size ' + text(l.get('size')) if l.get('size') is not None else 'scale ' + text(l.get('scale_factor'))})",
))


def _pixel_shuffle_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    factor = dim_param(layer, "upscale_factor")
    if x is None or x.rank is None or x.rank < 3 or factor is None:
        return UNKNOWN
    c, h, w = x.dims[-3:]
    channels = c.divide_exactly(factor * factor) if c is not None else None
    if c is not None and c.is_int and factor.is_int and channels is None:
        return UNKNOWN
    out = (channels, h * factor if h is not None else None, w * factor if w is not None else None)
    return Tensor(x.dims[:-3] + out, False, x.dtype, site.layer_origin(layer))


register(LayerKind("PixelShuffle", (("upscale_factor", REQUIRED),), _pixel_shuffle_forward,
                   lambda l: f"PixelShuffle({text(l.get('upscale_factor'))})"))


def _pad_kind(name: str, count: int) -> None:
    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        padding = layer.get("padding")
        if x is None:
            return UNKNOWN
        if isinstance(padding, Dim):
            padding = (padding,) * (2 * count)
        if not isinstance(padding, tuple):
            return UNKNOWN
        return pad(x, padding, site.layer_origin(layer))

    register(LayerKind(name, (("padding", REQUIRED), ("value", 0.0)), forward,
                       lambda l: f"{name}({text(l.get('padding'))})"))


def pad(x: Tensor, padding: tuple, origin: Origin) -> Tensor:
    """`F.pad`: pairs of (left, right) padding from the last dim backwards."""
    if len(padding) % 2 or len(padding) // 2 > len(x.dims):
        return UNKNOWN_TENSOR
    dims = list(x.dims)
    for pair in range(len(padding) // 2):
        left, right = padding[2 * pair], padding[2 * pair + 1]
        position = len(dims) - 1 - pair
        if isinstance(left, Dim) and isinstance(right, Dim) and dims[position] is not None:
            dims[position] = dims[position] + left + right
        else:
            dims[position] = None
    return Tensor(tuple(dims), x.variadic, x.dtype, origin)


for _count in (1, 2, 3):
    for _prefix in ("ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad", "CircularPad"):
        _pad_kind(f"{_prefix}{_count}d", _count)


# -------------------------------------------------------------- recurrent
def _rnn_kind(name: str, gates: int) -> LayerKind:
    if name == "RNN":
        signature = (("input_size", REQUIRED), ("hidden_size", REQUIRED), ("num_layers", ONE),
                     ("nonlinearity", "tanh"), ("bias", True), ("batch_first", False), ("dropout", 0.0),
                     ("bidirectional", False))
    else:
        signature = (("input_size", REQUIRED), ("hidden_size", REQUIRED), ("num_layers", ONE), ("bias", True),
                     ("batch_first", False), ("dropout", 0.0), ("bidirectional", False), ("proj_size", Dim()))

    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None:
            return UNKNOWN
        input_size, hidden = dim_param(layer, "input_size"), dim_param(layer, "hidden_size")
        layers, bidirectional = dim_param(layer, "num_layers"), flag(layer, "bidirectional")
        batch_first = flag(layer, "batch_first")
        proj = layer.get("proj_size", Dim())
        if wrong_last_dim(site, layer, x, input_size):
            return UNKNOWN
        if x.rank not in (2, 3) or bidirectional is None or batch_first is None or not isinstance(proj, Dim):
            return UNKNOWN
        directions = Dim.const(2 if bidirectional else 1)
        out_size = hidden if proj.as_int() == 0 else proj
        origin = site.layer_origin(layer)
        features = directions * out_size if out_size is not None else None
        state_count = directions * layers if layers is not None else None
        if x.rank == 2:
            output = Tensor((x.dims[0], features), False, x.dtype, origin)
            h = Tensor((state_count, out_size), False, x.dtype, origin)
            c = Tensor((state_count, hidden), False, x.dtype, origin)
        else:
            batch = x.dims[0] if batch_first else x.dims[1]
            time = x.dims[1] if batch_first else x.dims[0]
            output = Tensor((batch, time, features) if batch_first else (time, batch, features), False, x.dtype, origin)
            h = Tensor((state_count, batch, out_size), False, x.dtype, origin)
            c = Tensor((state_count, batch, hidden), False, x.dtype, origin)
        state: Value = TupleValue((h, c)) if name == "LSTM" else h
        return TupleValue((output, state))

    def count(layer: Layer) -> Dim | None:
        input_size, hidden = dim_param(layer, "input_size"), dim_param(layer, "hidden_size")
        layers, bidirectional = dim_param(layer, "num_layers"), flag(layer, "bidirectional")
        proj = layer.get("proj_size", Dim())
        if None in (input_size, hidden, layers, bidirectional) or proj != Dim() or layers.as_int() is None:
            return None
        directions = 2 if bidirectional else 1
        bias = Dim.const(2) * hidden if layer.get("bias") is not False else Dim()
        total = Dim()
        for index in range(layers.as_int()):
            width = input_size if index == 0 else hidden.scale(directions)
            per_direction = (hidden * width + hidden * hidden + bias).scale(gates)
            total = total + per_direction.scale(directions)
        return total

    def describe_rnn(layer: Layer) -> str:
        parts = [f"{text(layer.get('input_size'))} → {text(layer.get('hidden_size'))}"]
        if layer.get("num_layers") != ONE:
            parts.append(f"layers {text(layer.get('num_layers'))}")
        if layer.get("bidirectional") is True:
            parts.append("bidirectional")
        if layer.get("batch_first") is True:
            parts.append("batch_first")
        return f"{name}({', '.join(parts)})"

    return register(LayerKind(name, signature, forward, describe_rnn, count, lambda l: {},
                              {"input_size": "input_size", "hidden_size": "hidden_size", "num_layers": "num_layers"}))


_rnn_kind("RNN", 1)
_rnn_kind("GRU", 3)
_rnn_kind("LSTM", 4)


def _cell_kind(name: str, gates: int) -> None:
    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None:
            return UNKNOWN
        input_size, hidden = dim_param(layer, "input_size"), dim_param(layer, "hidden_size")
        if wrong_last_dim(site, layer, x, input_size):
            return UNKNOWN
        if x.rank not in (1, 2):
            return UNKNOWN
        origin = site.layer_origin(layer)
        h = Tensor(x.dims[:-1] + (hidden,), False, x.dtype, origin)
        return TupleValue((h, h)) if name == "LSTMCell" else h

    register(LayerKind(
        name, (("input_size", REQUIRED), ("hidden_size", REQUIRED), ("bias", True)), forward,
        lambda l: f"{name}({text(l.get('input_size'))} → {text(l.get('hidden_size'))})",
        lambda l: (lambda i, h: None if None in (i, h) else (h * i + h * h + (h.scale(2) if l.get("bias") is not False
                                                                                 else Dim())).scale(gates))(
            dim_param(l, "input_size"), dim_param(l, "hidden_size")),
    ))


_cell_kind("RNNCell", 1)
_cell_kind("GRUCell", 3)
_cell_kind("LSTMCell", 4)


# --------------------------------------------------------------- attention
def _mha_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    query = args[0] if args else kwargs.get("query")
    if not isinstance(query, Tensor):
        return UNKNOWN
    embed = dim_param(layer, "embed_dim")
    if query.dims and surely_differ(query.dims[-1], embed):
        mismatch(site, layer, f"queries with {render_dim(embed)} features in the last dim", query)
        return UNKNOWN
    origin = site.layer_origin(layer)
    output = Tensor(query.dims[:-1] + (embed,), query.variadic, query.dtype, origin) if query.dims else UNKNOWN_TENSOR
    need_weights = kwargs.get("need_weights", args[4] if len(args) > 4 else Bool(True))
    if isinstance(need_weights, Bool) and need_weights.value is False:
        return TupleValue((output, NONE))
    key = args[1] if len(args) > 1 else kwargs.get("key")
    weights: Value = UNKNOWN
    batch_first = flag(layer, "batch_first")
    if isinstance(key, Tensor) and query.rank == 3 and key.rank == 3 and batch_first is not None:
        batch = query.dims[0] if batch_first else query.dims[1]
        target = query.dims[1] if batch_first else query.dims[0]
        source = key.dims[1] if batch_first else key.dims[0]
        average = kwargs.get("average_attn_weights", Bool(True))
        if isinstance(average, Bool) and average.value is True:
            weights = Tensor((batch, target, source), False, query.dtype, origin)
        elif isinstance(average, Bool) and average.value is False:
            weights = Tensor((batch, dim_param(layer, "num_heads"), target, source), False, query.dtype, origin)
    return TupleValue((output, weights))


register(LayerKind(
    "MultiheadAttention",
    (("embed_dim", REQUIRED), ("num_heads", REQUIRED), ("dropout", 0.0), ("bias", True), ("add_bias_kv", False),
     ("add_zero_attn", False), ("kdim", None), ("vdim", None), ("batch_first", False)),
    _mha_forward,
    lambda l: f"MultiheadAttention({text(l.get('embed_dim'))}, heads {text(l.get('num_heads'))})",
    lambda l: _mha_params(dim_param(l, "embed_dim"), l.get("bias") is not False)
    if l.get("kdim") is None and l.get("vdim") is None and l.get("add_bias_kv") is False else None,
    lambda l: {},
    {"embed_dim": "embed_dim", "num_heads": "num_heads"},
))


def _mha_params(embed: Dim | None, bias: bool) -> Dim | None:
    if embed is None:
        return None
    weights = (embed * embed).scale(4)
    return weights + embed.scale(4) if bias else weights


def _encoder_layer_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    d_model = dim_param(layer, "d_model")
    if wrong_last_dim(site, layer, x, d_model):
        return UNKNOWN
    if not x.dims and d_model is not None:
        return site.require(args[0], Tensor((d_model,), True))
    return x


def _encoder_layer_params(layer: Layer) -> Dim | None:
    d, ff = dim_param(layer, "d_model"), dim_param(layer, "dim_feedforward")
    attention = _mha_params(d, True)
    if None in (d, ff, attention) or layer.get("bias") is False:
        return None
    return attention + d * ff + ff + ff * d + d + d.scale(4)


_TRANSFORMER_LAYER = (("d_model", REQUIRED), ("nhead", REQUIRED), ("dim_feedforward", Dim.const(2048)),
                      ("dropout", 0.1), ("activation", "relu"), ("layer_norm_eps", 1e-5), ("batch_first", False),
                      ("norm_first", False), ("bias", True))
register(LayerKind(
    "TransformerEncoderLayer", _TRANSFORMER_LAYER, _encoder_layer_forward,
    lambda l: f"TransformerEncoderLayer(d_model {text(l.get('d_model'))}, heads {text(l.get('nhead'))})",
    _encoder_layer_params,
))
register(LayerKind(
    "TransformerDecoderLayer", _TRANSFORMER_LAYER, _encoder_layer_forward,
    lambda l: f"TransformerDecoderLayer(d_model {text(l.get('d_model'))}, heads {text(l.get('nhead'))})",
    lambda l: (lambda base, d: None if base is None else base + _mha_params(d, True) + d.scale(2))(
        _encoder_layer_params(l), dim_param(l, "d_model")),
))


# --------------------------------------------------------------- containers
def _sequential_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    if len(args) != 1 or kwargs:
        return UNKNOWN
    value = args[0]
    for child in layer.children:
        value = site.call(child, [value])
        if value is UNKNOWN:
            return UNKNOWN
    return value


SEQUENTIAL = register(LayerKind("Sequential", (), _sequential_forward, lambda l: f"Sequential({len(l.children)} layers)"))


def _encoder_stack_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    if not args or not layer.children:
        return UNKNOWN
    value = site.call(layer.children[0], [args[0]] + list(args[1:2]) if layer.kind.name.endswith("Decoder")
                      else [args[0]])
    if layer.get("norm") is not None and isinstance(value, Tensor):
        return value
    return value


register(LayerKind("TransformerEncoder", (("encoder_layer", REQUIRED), ("num_layers", REQUIRED), ("norm", None)),
                   _encoder_stack_forward,
                   lambda l: f"TransformerEncoder({text(l.get('num_layers'))} layers)",
                   lambda l: None))
register(LayerKind("TransformerDecoder", (("decoder_layer", REQUIRED), ("num_layers", REQUIRED), ("norm", None)),
                   _encoder_stack_forward,
                   lambda l: f"TransformerDecoder({text(l.get('num_layers'))} layers)",
                   lambda l: None))


# ------------------------------------------------------------------- losses
def loss_result(site: Site, reduction: Any, prediction: Value, target: Value, class_dim: bool) -> Value:
    """Scalar for 'mean'/'sum'; the per-element shape for 'none'."""
    origin = site.here()
    if reduction in ("mean", "sum"):
        return Tensor((), False, "float", origin)
    if reduction != "none" or not isinstance(prediction, Tensor):
        return UNKNOWN
    if class_dim:
        if isinstance(target, Tensor) and target.dtype == "long":
            return target.with_origin(origin)
        if prediction.rank is None:
            return UNKNOWN
        if prediction.rank <= 1:
            return Tensor((), False, "float", origin)
        return Tensor(prediction.dims[:1] + prediction.dims[2:], False, "float", origin)
    if isinstance(target, Tensor):
        try:
            return ops.broadcast([prediction, target], origin)
        except ShapeError:
            return UNKNOWN
    return prediction.with_origin(origin)


CLASS_LOSSES = {"CrossEntropyLoss", "NLLLoss"}
ELEMENT_LOSSES = {"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
                  "SoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss"}


def _loss_kind(name: str) -> None:
    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        prediction = args[0] if args else kwargs.get("input")
        target = args[1] if len(args) > 1 else kwargs.get("target")
        return loss_result(site, layer.get("reduction"), prediction or UNKNOWN, target or UNKNOWN,
                           name in CLASS_LOSSES)

    register(LayerKind(name, (), forward, lambda l: f"{name}(reduction={l.get('reduction')!r})"))


LOSSES = CLASS_LOSSES | ELEMENT_LOSSES
for _name in sorted(LOSSES):
    _loss_kind(_name)


def build_layer(kind: LayerKind, args: Sequence[Value], kwargs: dict[str, Value]) -> Value:
    """The `Layer` a constructor call builds."""
    if kind.name in LOSSES:
        reduction = kwargs.get("reduction")
        value = reduction.value if isinstance(reduction, Str) else ("mean" if reduction is None else UNKNOWN)
        return Layer(kind, (("reduction", value),))
    if kind.name == "Sequential":
        return sequential(list(args))
    params = bind_params(kind, args, kwargs)
    if params is None:
        return UNKNOWN
    if kind.name in ("TransformerEncoder", "TransformerDecoder"):
        inner = args[0] if args else kwargs.get("encoder_layer", kwargs.get("decoder_layer"))
        if inner is None:
            return UNKNOWN
        return Layer(kind, params, (inner,))
    return Layer(kind, params)


def sequential(children: list[Value], names: Sequence[str] | None = None) -> Value:
    return Layer(SEQUENTIAL, (), tuple(children), tuple(names) if names else tuple(str(i) for i in range(len(children))))


def layer_attribute(layer: Layer, name: str) -> Value:
    """`self.fc.weight`, `self.fc.out_features`, `self.lstm.hidden_size`, ..."""
    weights = layer.kind.weights(layer)
    if name in weights:
        tensor = weights[name]
        if name == "bias" and layer.get("bias") is False:
            return NONE
        return tensor
    parameter = layer.kind.field_names.get(name)
    if parameter is not None:
        value = layer.get(parameter)
        return Int(value) if isinstance(value, Dim) else Int(None)
    return UNKNOWN
