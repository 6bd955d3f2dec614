"""Layers that keep their input's shape (activations, dropout, `Identity`, `Softmax`), and `nn.GLU`."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.layers.kinds import LayerKind, Site, input_tensor, register, text
from torch_lsp.shapes.values import UNKNOWN, Layer, Value


def _same_shape(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    return x


def _same_shape_kinds(*names: str) -> None:
    for name in names:
        register(LayerKind(name, (), _same_shape, lambda l, name=name: f"{name}()"))


def _softmax_kind(name: str) -> None:
    """Softmax and friends take `dim`; keep it so the hover shows it."""
    register(LayerKind(name, (("dim", None),), _same_shape, lambda l: f"{name}(dim={text(l.get('dim'))})"))


_same_shape_kinds(
    "ReLU", "ReLU6", "LeakyReLU", "PReLU", "RReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid",
    "Tanh", "Softplus", "Softsign", "Hardtanh", "Hardswish", "Hardsigmoid", "Tanhshrink", "Softshrink",
    "Hardshrink", "LogSigmoid", "Threshold", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout",
    "FeatureAlphaDropout", "Identity", "Softmax2d",
)
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
