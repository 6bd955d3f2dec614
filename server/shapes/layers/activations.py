"""Layers that keep their input's shape (activations, dropout, `Identity`, `Softmax`), and `nn.GLU`."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.layers.kinds import LayerKind, Site, input_tensor, register, text
from torch_lsp.shapes.layers.requirements import dim_rejected, rank_rejected
from torch_lsp.shapes.values import UNKNOWN, Layer, Value


def _same_shape(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    return x


def _same_shape_kinds(*names: str) -> None:
    for name in names:
        register(LayerKind(name, (), _same_shape, lambda l, name=name: f"{name}()"))


def _softmax_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    dim = layer.get("dim")
    if isinstance(dim, Dim) and dim_rejected(site, f"`{site.callee}` ({layer.kind.describe(layer)})", x, dim.as_int()):
        return UNKNOWN
    return x


def _softmax_kind(name: str) -> None:
    """Softmax and friends take `dim`; keep it so the hover shows it."""
    register(LayerKind(name, (("dim", None),), _softmax_forward, lambda l: f"{name}(dim={text(l.get('dim'))})"))


def _feature_dropout_kind(name: str, ranks: tuple[int, ...] | None, at_least: int | None) -> None:
    """Dropout of whole channels: `Dropout1d` takes 2-d or 3-d inputs, `Dropout2d` at least 2-d
    (checked while training, a module's default state)."""
    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        x = input_tensor(site, args)
        if x is None or rank_rejected(site, f"`{site.callee}` ({name})", x, ranks, at_least):
            return UNKNOWN
        return x

    register(LayerKind(name, (), forward, lambda l: f"{name}()"))


_same_shape_kinds(
    "ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid",
    "Tanh", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink", "Softshrink",
    "Hardshrink", "LogSigmoid", "Threshold", "Dropout", "Dropout3d", "AlphaDropout",
    "FeatureAlphaDropout", "Identity", "Softmax2d",
)
_feature_dropout_kind("Dropout1d", (2, 3), None)
_feature_dropout_kind("Dropout2d", None, 2)
_softmax_kind("Softmax")
_softmax_kind("Softmin")
_softmax_kind("LogSoftmax")


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
