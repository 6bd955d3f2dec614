"""Building a `Layer` from its constructor call, and reading its attributes (`self.fc.weight`)."""
from __future__ import annotations

from typing import Sequence

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.layers.containers import sequential
from torch_lsp.shapes.layers.kinds import LayerKind, bind_params
from torch_lsp.shapes.layers.losses import CLASS_WEIGHTED, LOSSES, WEIGHT_FIRST, requested_reduction
from torch_lsp.shapes.values import NONE, UNKNOWN, Int, Layer, Tensor, Value


def build_layer(kind: LayerKind, args: Sequence[Value], kwargs: dict[str, Value]) -> Value:
    """The `Layer` a constructor call builds."""
    if kind.name in LOSSES:
        value = requested_reduction(args, kwargs, 1 if kind.name in WEIGHT_FIRST else 0)
        weight = kwargs.get("weight", args[0] if args else None) if kind.name in CLASS_WEIGHTED else None
        if isinstance(weight, Tensor):
            return Layer(kind, (("reduction", value), ("weight", weight)))
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
