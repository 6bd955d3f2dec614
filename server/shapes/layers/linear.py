"""`nn.Linear`, `nn.LazyLinear`, `nn.Bilinear`, `nn.Embedding` (a lookup into a weight matrix) and
`nn.EmbeddingBag` (lookups pooled per bag)."""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import known_sum
from torch_lsp.shapes.layers.kinds import (
    REQUIRED, LayerKind, Site, bias_count, dim_param, input_tensor, known_product, mismatch, register, text,
    wrong_last_dim,
)
from torch_lsp.shapes.layers.requirements import DTYPE_WORDS, float_indices
from torch_lsp.shapes.ops import describe, surely_differ
from torch_lsp.shapes.values import UNKNOWN, Layer, Tensor, Value, render_dim


def _linear_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = input_tensor(site, args)
    if x is None:
        return UNKNOWN
    in_f, out_f = dim_param(layer, "in_features"), dim_param(layer, "out_features")
    if wrong_last_dim(site, layer, x, in_f, owner="its"):
        return UNKNOWN
    if x.dtype in ("long", "bool"):  # its weight is floating point, and a matrix product does not promote
        site.fail(f"`{site.callee}` is {layer.kind.describe(layer)}, whose weight is floating-point, but it is given "
                  f"{DTYPE_WORDS[x.dtype]} {describe(x)}", "dtype")
        return UNKNOWN
    if in_f is not None and not x.dims:
        x = site.require(args[0], Tensor((in_f,), True))
    return ops.linear(x, in_f, out_f, site.layer_origin(layer))


register(LayerKind(
    "Linear", (("in_features", REQUIRED), ("out_features", REQUIRED), ("bias", True)),
    _linear_forward,
    lambda l: f"Linear({text(l.get('in_features'))} → {text(l.get('out_features'))})",
    lambda l: known_sum((known_product(dim_param(l, "in_features"), dim_param(l, "out_features")),
                         bias_count(l, dim_param(l, "out_features")))),
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
    lambda l: known_sum((known_product(dim_param(l, "in1_features"), dim_param(l, "in2_features"),
                                       dim_param(l, "out_features")),
                         bias_count(l, dim_param(l, "out_features")))),
))


def _lookup_indices(site: Site, layer: Layer, args: list) -> Tensor | None:
    """The index tensor an embedding lookup is given; None when unknown or floating-point
    (reported: a lookup takes integer indices)."""
    x = input_tensor(site, args)
    if x is None:
        return None
    problem = float_indices(f"`{site.callee}` ({layer.kind.describe(layer)})", x)
    if problem is not None:
        site.fail(problem, "dtype")
        return None
    return x


def _embedding_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    x = _lookup_indices(site, layer, args)
    if x is None:
        return UNKNOWN
    origin = site.layer_origin(layer)
    return Tensor(x.dims + (dim_param(layer, "embedding_dim"),), x.variadic, "float", origin)


register(LayerKind(
    "Embedding", (("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED), ("padding_idx", None)),
    _embedding_forward,
    lambda l: f"Embedding({text(l.get('num_embeddings'))}, {text(l.get('embedding_dim'))})",
    lambda l: known_product(dim_param(l, "num_embeddings"), dim_param(l, "embedding_dim")),
    lambda l: {"weight": Tensor((dim_param(l, "num_embeddings"), dim_param(l, "embedding_dim")))},
    {"num_embeddings": "num_embeddings", "embedding_dim": "embedding_dim"},
))


def _embedding_bag_forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
    """One pooled row per bag, always 2-d: a 2-d input is one bag per row; a 1-d input with
    `offsets` has as many bags as offsets (not known here)."""
    x = _lookup_indices(site, layer, args)
    if x is None:
        return UNKNOWN
    offsets = args[1] if len(args) > 1 else kwargs.get("offsets")
    bags = x.dims[0] if x.rank == 2 and offsets is None else None
    return Tensor((bags, dim_param(layer, "embedding_dim")), False, "float", site.layer_origin(layer))


register(LayerKind(
    "EmbeddingBag", (("num_embeddings", REQUIRED), ("embedding_dim", REQUIRED), ("max_norm", None),
                     ("norm_type", 2.0), ("scale_grad_by_freq", False), ("mode", "mean")),
    _embedding_bag_forward,
    lambda l: f"EmbeddingBag({text(l.get('num_embeddings'))}, {text(l.get('embedding_dim'))})",
    lambda l: known_product(dim_param(l, "num_embeddings"), dim_param(l, "embedding_dim")),
    lambda l: {"weight": Tensor((dim_param(l, "num_embeddings"), dim_param(l, "embedding_dim")))},
    {"num_embeddings": "num_embeddings", "embedding_dim": "embedding_dim"},
))
