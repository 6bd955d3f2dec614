"""Convolution and pooling: the output-size arithmetic, and the `nn.Conv2d`, `nn.ConvTranspose2d`,
`nn.MaxPool2d`, `nn.AvgPool2d`, `nn.AdaptiveAvgPool2d` layers (and their 1-d/3-d forms).
The functional forms (`F.conv2d`, `F.max_pool2d`) are in `torch_lsp.shapes.functions.conv_pool`
and use the arithmetic here."""
from __future__ import annotations

from typing import Any, Sequence

from torch_lsp.shapes.dims import Dim, known_sum
from torch_lsp.shapes.layers.kinds import (
    REQUIRED, LayerKind, Site, bias_count, dim_param, flag, input_tensor, known_product, mismatch, register, text,
    tuple_param,
)
from torch_lsp.shapes.layers.requirements import conv_rejected, pool_rejected, rank_rejected
from torch_lsp.shapes.ops import ONE, concrete, surely_differ
from torch_lsp.shapes.values import UNKNOWN, Layer, Origin, Tensor, TupleValue, Value, render_dim


# ------------------------------------------------- the size arithmetic
def conv_output(size: Dim | None, kernel: Dim | None, stride: Dim | None, padding: Dim | None,
                dilation: Dim | None) -> Dim | None:
    """floor((L + 2p - d*(k-1) - 1) / s) + 1"""
    if None in (size, kernel, stride, padding, dilation):
        return None
    numerator = size + padding.scale(2) - dilation * (kernel - ONE) - ONE  # type: ignore[operator,union-attr]
    quotient = numerator.floordiv(stride)  # type: ignore[arg-type]
    if quotient is None:
        return None
    result = quotient + ONE
    return None if result.is_too_large() else result


def conv_transpose_output(size: Dim | None, kernel: Dim | None, stride: Dim | None, padding: Dim | None,
                          dilation: Dim | None, output_padding: Dim | None) -> Dim | None:
    """(L-1)*s - 2p + d*(k-1) + output_padding + 1"""
    if None in (size, kernel, stride, padding, dilation, output_padding):
        return None
    result = (size - ONE) * stride - padding.scale(2) + dilation * (kernel - ONE) + output_padding + ONE  # type: ignore
    return None if result.is_too_large() else result


def pool_output(size: Dim | None, kernel: Dim | None, stride: Dim | None, padding: Dim | None,
                dilation: Dim | None, ceil_mode: bool) -> Dim | None:
    if not ceil_mode:
        return conv_output(size, kernel, stride, padding, dilation)
    values = [concrete(x) for x in (size, kernel, stride, padding, dilation)]
    if None in values:
        return None
    length, k, s, p, d = values
    out = -(-(length + 2 * p - d * (k - 1) - 1) // s) + 1
    if (out - 1) * s >= length + p:
        out -= 1
    return Dim.const(out)


def spatial(tensor: Tensor, count: int, channels: Dim | None, sizes: Sequence[Dim | None],
            origin: Origin | None) -> Tensor:
    """Replace the channel dim and the last `count` dims (batched or not)."""
    lead = tensor.dims[:-(count + 1)] if tensor.rank is not None else tensor.dims[:0]
    if tensor.rank is None:
        return Tensor((channels,) + tuple(sizes), True, tensor.dtype, origin)
    return Tensor(tuple(lead) + (channels,) + tuple(sizes), False, tensor.dtype, origin)


def spatial_input(tensor: Tensor, count: int) -> tuple[Dim | None, list[Dim | None]] | None:
    """(channels, spatial sizes) of an input to a `count`-d conv/pool, or None if the rank does not fit."""
    if tensor.rank is not None and tensor.rank not in (count + 1, count + 2):
        return None
    dims = tensor.dims
    if len(dims) < count:
        return (None, [None] * (count - len(dims)) + list(dims)) if tensor.rank is None else None
    channel = dims[-(count + 1)] if len(dims) > count else None
    return channel, list(dims[-count:])


# ------------------------------------------------------------ convolution
def _conv_kind(name: str, count: int, transposed: bool) -> LayerKind:
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
        shaped = spatial_input(x, count)
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
        if conv_rejected(site, f"`{site.callee}` ({describe_conv(layer)})", x, sizes, out_sizes):
            return UNKNOWN
        return spatial(x, count, out_c, out_sizes, site.layer_origin(layer))

    def weights(layer: Layer) -> dict[str, Tensor]:
        kernel = tuple_param(layer, "kernel_size", count) or (None,) * count
        in_c, out_c, groups = dim_param(layer, "in_channels"), dim_param(layer, "out_channels"), dim_param(layer, "groups")
        first, second = (in_c, out_c) if transposed else (out_c, in_c)
        per_group = second.floordiv(groups) if second is not None and groups is not None else None
        return {"weight": Tensor((first, per_group) + kernel), "bias": Tensor((out_c,))}

    def count_params(layer: Layer) -> Dim | None:
        shape = weights(layer)["weight"]
        return known_sum((known_product(*shape.dims), bias_count(layer, dim_param(layer, "out_channels"))))

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
        return [conv_transpose_output(s, k, st, p, d, e)
                for s, k, st, p, d, e in zip(sizes, kernel, stride, padding, dilation, extra)]
    return [conv_output(s, k, st, p, d) for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]


def describe_conv(layer: Layer) -> str:
    parts = [f"{text(layer.get('in_channels'))} → {text(layer.get('out_channels'))}",
             f"kernel {text(layer.get('kernel_size'))}"]
    for name, default in (("stride", ONE), ("padding", Dim()), ("dilation", ONE), ("groups", ONE)):
        value = layer.get(name)
        if value != default and value != (default,) * 3 and not (isinstance(value, tuple) and set(value) == {default}):
            parts.append(f"{name} {text(value)}")
    return f"{layer.kind.name}({', '.join(parts)})"


_conv_kind("Conv1d", 1, transposed=False)
_conv_kind("Conv2d", 2, transposed=False)
_conv_kind("Conv3d", 3, transposed=False)
_conv_kind("ConvTranspose1d", 1, transposed=True)
_conv_kind("ConvTranspose2d", 2, transposed=True)
_conv_kind("ConvTranspose3d", 3, transposed=True)


# ---------------------------------------------------------------- pooling
def _pool_kind(name: str, count: int, average: bool) -> LayerKind:
    if average:
        signature = (("kernel_size", REQUIRED), ("stride", None), ("padding", Dim()), ("ceil_mode", False),
                     ("count_include_pad", True), ("divisor_override", None))
    else:
        signature = (("kernel_size", REQUIRED), ("stride", None), ("padding", Dim()), ("dilation", ONE),
                     ("return_indices", False), ("ceil_mode", False))

    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is not None and rank_rejected(site, f"`{site.callee}` ({describe_pool(layer)})", x, (count + 1, count + 2)):
            return UNKNOWN
        pooled = _pooled_input(site, args, count)
        if pooled is None:
            return UNKNOWN
        x, channels, sizes = pooled
        kernel = tuple_param(layer, "kernel_size", count)
        stride = kernel if layer.get("stride") is None else tuple_param(layer, "stride", count)
        padding = tuple_param(layer, "padding", count)
        dilation = (ONE,) * count if average else tuple_param(layer, "dilation", count)
        ceil_mode = flag(layer, "ceil_mode")
        if None in (kernel, stride, padding, dilation) or ceil_mode is None:
            out = [None] * count
        else:
            out = [pool_output(s, k, st, p, d, ceil_mode)
                   for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]
            if pool_rejected(site, f"`{site.callee}` ({describe_pool(layer)})", x, sizes, kernel, stride, padding,
                             dilation, out):
                return UNKNOWN
        return _with_indices(layer, spatial(x, count, channels, out, site.layer_origin(layer)))

    def describe_pool(layer: Layer) -> str:
        parts = [text(layer.get("kernel_size"))]
        if layer.get("stride") is not None:
            parts.append(f"stride {text(layer.get('stride'))}")
        if layer.get("padding") not in (Dim(), None):
            parts.append(f"padding {text(layer.get('padding'))}")
        return f"{name}({', '.join(parts)})"

    return register(LayerKind(name, signature, forward, describe_pool))


def _adaptive_kind(name: str, count: int, average: bool) -> LayerKind:
    signature = (("output_size", REQUIRED),) + ((("return_indices", False),) if not average else ())

    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        # No rank check: an output of size 1 takes a mean, which accepts any rank on some versions.
        pooled = _pooled_input(site, args, count)
        if pooled is None:
            return UNKNOWN
        x, channels, sizes = pooled
        out = _adaptive_sizes(layer.get("output_size"), sizes, count)
        return _with_indices(layer, spatial(x, count, channels, out, site.layer_origin(layer)))

    return register(LayerKind(name, signature, forward, lambda l: f"{name}({text(l.get('output_size'))})"))


def _pooled_input(site: Site, args: list, count: int) -> tuple[Tensor, Dim | None, list[Dim | None]] | None:
    """The input of a `count`-d pooling layer, its channels and its spatial sizes; None if no such input."""
    x = input_tensor(site, args)
    if x is None:
        return None
    shaped = spatial_input(x, count)
    if shaped is None:
        return None
    return x, shaped[0], shaped[1]


def _with_indices(layer: Layer, result: Tensor) -> Value:
    """`return_indices=True`: the pooled values and their (long) indices."""
    if flag(layer, "return_indices"):
        return TupleValue((result, result.with_dims(result.dims, dtype="long")))
    return result


def _adaptive_sizes(output_size: Any, sizes: list, count: int) -> list[Dim | None]:
    if isinstance(output_size, Dim):
        return [output_size] * count
    if isinstance(output_size, tuple) and len(output_size) == count:
        return [size if o is None else (o if isinstance(o, Dim) else None) for o, size in zip(output_size, sizes)]
    return [None] * count


_pool_kind("MaxPool1d", 1, average=False)
_pool_kind("MaxPool2d", 2, average=False)
_pool_kind("MaxPool3d", 3, average=False)
_pool_kind("AvgPool1d", 1, average=True)
_pool_kind("AvgPool2d", 2, average=True)
_pool_kind("AvgPool3d", 3, average=True)
_adaptive_kind("AdaptiveMaxPool1d", 1, average=False)
_adaptive_kind("AdaptiveMaxPool2d", 2, average=False)
_adaptive_kind("AdaptiveMaxPool3d", 3, average=False)
_adaptive_kind("AdaptiveAvgPool1d", 1, average=True)
_adaptive_kind("AdaptiveAvgPool2d", 2, average=True)
_adaptive_kind("AdaptiveAvgPool3d", 3, average=True)
