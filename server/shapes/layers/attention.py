"""`nn.MultiheadAttention` and the transformer layers (`nn.TransformerEncoderLayer`, `...DecoderLayer`)."""
from __future__ import annotations

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.layers.kinds import (
    REQUIRED, LayerKind, Site, dim_param, flag, input_tensor, mismatch, register, text, wrong_last_dim,
)
from torch_lsp.shapes.ops import surely_differ
from torch_lsp.shapes.values import NONE, UNKNOWN, UNKNOWN_TENSOR, Bool, Layer, Tensor, TupleValue, Value, render_dim


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
