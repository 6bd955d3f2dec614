"""`F.conv2d`, `F.conv_transpose2d`, `F.max_pool2d`, `F.avg_pool2d`, `F.adaptive_avg_pool2d` (and their
1-d/3-d forms).  The size arithmetic they share with the `nn.Conv2d`/`nn.MaxPool2d` layers lives
beside those layers, in `torch_lsp.shapes.layers.conv_pool`."""
from __future__ import annotations

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import bool_of, dim_of
from torch_lsp.shapes.functions.registry import FUNCTIONAL, TORCH, Call, function
from torch_lsp.shapes.layers import param_of
from torch_lsp.shapes.layers.conv_pool import (
    conv_output, conv_transpose_output, pool_output, spatial, spatial_input,
)
from torch_lsp.shapes.layers.requirements import conv_rejected, pool_rejected, rank_rejected
from torch_lsp.shapes.ops import ONE, describe, surely_differ
from torch_lsp.shapes.values import NONE, UNKNOWN, Int, Str, Tensor, TupleValue, Value


def _f_conv(count: int, transposed: bool):
    def rule(call: Call) -> Value:
        x, weight = call.arg(0, "input"), call.arg(1, "weight")
        if not isinstance(x, Tensor) or not isinstance(weight, Tensor) or weight.rank != count + 2:
            return UNKNOWN
        groups = dim_of(call.arg(6 if transposed else 6, "groups", Int(ONE)))
        if rank_rejected(call.site, f"`{call.site.callee}`", x, (count + 1, count + 2)):
            return UNKNOWN
        shaped = spatial_input(x, count)
        if shaped is None or groups is None:
            return UNKNOWN
        channels, sizes = shaped
        expected = weight.dims[0] if transposed else (weight.dims[1] * groups if weight.dims[1] is not None else None)
        if surely_differ(channels, expected):
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
                return spatial(x, count, out, [None] * count, call.origin())
            new = [conv_transpose_output(s, k, st, p, d, e) for s, k, st, p, d, e in
                   zip(sizes, kernel, stride, padding, dilation, output_padding)]
            if conv_rejected(call.site, f"`{call.site.callee}`", x, sizes, new):
                return UNKNOWN
        else:
            dilation = _spatial_arg(call, 5, "dilation", count, ONE)
            if padding == "same":
                new = list(sizes)
            elif None in (stride, padding, dilation):
                return spatial(x, count, out, [None] * count, call.origin())
            else:
                new = [conv_output(s, k, st, p, d) for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]
        if conv_rejected(call.site, f"`{call.site.callee}`", x, sizes, new):
            return UNKNOWN
        return spatial(x, count, out, new, call.origin())
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


function("conv1d", within=(TORCH, FUNCTIONAL))(_f_conv(1, transposed=False))
function("conv2d", within=(TORCH, FUNCTIONAL))(_f_conv(2, transposed=False))
function("conv3d", within=(TORCH, FUNCTIONAL))(_f_conv(3, transposed=False))
function("conv_transpose1d", within=(FUNCTIONAL,))(_f_conv(1, transposed=True))
function("conv_transpose2d", within=(FUNCTIONAL,))(_f_conv(2, transposed=True))
function("conv_transpose3d", within=(FUNCTIONAL,))(_f_conv(3, transposed=True))


def _f_pool(count: int, average: bool):
    def rule(call: Call) -> Value:
        x = call.arg(0, "input")
        if isinstance(x, Tensor) and rank_rejected(call.site, f"`{call.site.callee}`", x, (count + 1, count + 2)):
            return UNKNOWN
        pooled = _pooled_input(call, count)
        if pooled is None:
            return UNKNOWN
        x, channels, sizes = pooled
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
            new = [pool_output(s, k, st, p, d, ceil_mode)
                   for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]
            if pool_rejected(call.site, f"`{call.site.callee}`", x, sizes, kernel, stride, padding, dilation, new):
                return UNKNOWN
        result = spatial(x, count, channels, new, call.origin())
        if not average and bool_of(call.arg(6, "return_indices")):
            return TupleValue((result, result.with_dims(result.dims, dtype="long")))
        return result
    return rule


def _pooled_input(call: Call, count: int) -> tuple[Tensor, Dim | None, list[Dim | None]] | None:
    """The input of a `count`-d pooling, its channels and its spatial sizes; None if no such input."""
    x = call.arg(0, "input")
    if not isinstance(x, Tensor):
        return None
    shaped = spatial_input(x, count)
    if shaped is None:
        return None
    return x, shaped[0], shaped[1]


def _f_adaptive(count: int):
    # No rank check: an output of size 1 takes a mean, which accepts any rank on some versions.
    def rule(call: Call) -> Value:
        pooled = _pooled_input(call, count)
        if pooled is None:
            return UNKNOWN
        x, channels, sizes = pooled
        size = param_of(call.arg(1, "output_size") or UNKNOWN)
        if isinstance(size, Dim):
            new = [size] * count
        elif isinstance(size, tuple) and len(size) == count:
            new = [old if s is None else (s if isinstance(s, Dim) else None) for s, old in zip(size, sizes)]
        else:
            new = [None] * count
        return spatial(x, count, channels, new, call.origin())
    return rule


function("max_pool1d", within=(TORCH, FUNCTIONAL))(_f_pool(1, average=False))
function("max_pool2d", within=(TORCH, FUNCTIONAL))(_f_pool(2, average=False))
function("max_pool3d", within=(TORCH, FUNCTIONAL))(_f_pool(3, average=False))
function("avg_pool1d", within=(TORCH, FUNCTIONAL))(_f_pool(1, average=True))
function("avg_pool2d", within=(TORCH, FUNCTIONAL))(_f_pool(2, average=True))
function("avg_pool3d", within=(TORCH, FUNCTIONAL))(_f_pool(3, average=True))
function("adaptive_avg_pool1d", "adaptive_max_pool1d", within=(FUNCTIONAL,))(_f_adaptive(1))
function("adaptive_avg_pool2d", "adaptive_max_pool2d", within=(FUNCTIONAL,))(_f_adaptive(2))
function("adaptive_avg_pool3d", "adaptive_max_pool3d", within=(FUNCTIONAL,))(_f_adaptive(3))


@function("unfold", within=(FUNCTIONAL,))
def _f_unfold(call: Call) -> Value:
    """`F.unfold` (im2col): [B, C, H, W] -> [B, C*kh*kw, L], L the number of sliding blocks
    (each spatial size as a convolution's output); unbatched [C, H, W] -> [C*kh*kw, L]."""
    x = call.arg(0, "input")
    if not isinstance(x, Tensor) or x.rank not in (3, 4) or call.arg(1, "kernel_size") is None:
        return UNKNOWN
    kernel = _spatial_arg(call, 1, "kernel_size", 2, ONE)
    dilation = _spatial_arg(call, 2, "dilation", 2, ONE)
    padding = _spatial_arg(call, 3, "padding", 2, Dim())
    stride = _spatial_arg(call, 4, "stride", 2, ONE)
    if any(not isinstance(p, tuple) for p in (kernel, dilation, padding, stride)):
        return UNKNOWN
    channels, sizes = x.dims[-3], x.dims[-2:]
    blocks = [conv_output(s, k, st, p, d) for s, k, st, p, d in zip(sizes, kernel, stride, padding, dilation)]
    count = blocks[0] * blocks[1] if None not in blocks else None
    features = channels * kernel[0] * kernel[1] if channels is not None else None
    return Tensor(x.dims[:-3] + (features, count), False, x.dtype, call.origin())
