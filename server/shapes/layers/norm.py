"""Normalisation layers: `nn.BatchNorm2d`, `nn.InstanceNorm2d`, `nn.LayerNorm`, `nn.RMSNorm`, `nn.GroupNorm`."""
from __future__ import annotations

from torch_lsp.shapes.dims import Dim, product
from torch_lsp.shapes.layers.kinds import (
    REQUIRED, LayerKind, Site, dim_param, input_tensor, known_product, mismatch, register, text,
)
from torch_lsp.shapes.ops import surely_differ
from torch_lsp.shapes.values import UNKNOWN, Layer, Tensor, Value, render_dim


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
        lambda l: known_product(Dim.const(2), dim_param(l, "num_features")) if l.get("affine") is True else (
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


_channel_norm_kind("BatchNorm1d", affine_default=True)
_channel_norm_kind("BatchNorm2d", affine_default=True)
_channel_norm_kind("BatchNorm3d", affine_default=True)
_channel_norm_kind("InstanceNorm1d", affine_default=False)
_channel_norm_kind("InstanceNorm2d", affine_default=False)
_channel_norm_kind("InstanceNorm3d", affine_default=False)


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
    lambda l: known_product(Dim.const(2), dim_param(l, "num_channels")) if l.get("affine") is not False else Dim(),
    lambda l: {"weight": Tensor((dim_param(l, "num_channels"),)), "bias": Tensor((dim_param(l, "num_channels"),))},
))
