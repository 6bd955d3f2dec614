"""Layers that reshape or resize: `nn.Flatten`, `nn.Unflatten`, `nn.Upsample` (and `interpolate`,
which `F.interpolate` shares), `nn.PixelShuffle`, the padding layers (and `pad`, shared with `F.pad`)."""
from __future__ import annotations

from typing import Any

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.layers.kinds import REQUIRED, LayerKind, Site, dim_param, input_tensor, register, text
from torch_lsp.shapes.layers.requirements import flatten_rejected
from torch_lsp.shapes.ops import ONE
from torch_lsp.shapes.values import UNKNOWN, UNKNOWN_TENSOR, Layer, Origin, Tensor, Value


def _flatten_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    start, end = layer.get("start_dim"), layer.get("end_dim")
    if x is None or not isinstance(start, Dim) or not isinstance(end, Dim) or None in (start.as_int(), end.as_int()):
        return UNKNOWN
    if flatten_rejected(site, f"`{site.callee}` ({layer.kind.describe(layer)})", x, start.as_int(), end.as_int()):
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


_pad_kind("ZeroPad1d", 1)
_pad_kind("ZeroPad2d", 2)
_pad_kind("ZeroPad3d", 3)
_pad_kind("ConstantPad1d", 1)
_pad_kind("ConstantPad2d", 2)
_pad_kind("ConstantPad3d", 3)
_pad_kind("ReflectionPad1d", 1)
_pad_kind("ReflectionPad2d", 2)
_pad_kind("ReflectionPad3d", 3)
_pad_kind("ReplicationPad1d", 1)
_pad_kind("ReplicationPad2d", 2)
_pad_kind("ReplicationPad3d", 3)
_pad_kind("CircularPad1d", 1)
_pad_kind("CircularPad2d", 2)
_pad_kind("CircularPad3d", 3)
