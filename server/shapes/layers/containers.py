"""Layers that hold layers: `nn.Sequential`, `nn.TransformerEncoder`, `nn.TransformerDecoder`."""
from __future__ import annotations

from typing import Sequence

from torch_lsp.shapes.layers.kinds import REQUIRED, LayerKind, Site, register, text
from torch_lsp.shapes.values import UNKNOWN, Layer, Tensor, Value


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


def sequential(children: list[Value], names: Sequence[str] | None = None) -> Value:
    return Layer(SEQUENTIAL, (), tuple(children), tuple(names) if names else tuple(str(i) for i in range(len(children))))
