"""Losses: `nn.CrossEntropyLoss`, `nn.MSELoss`, ... (and `loss_result`, shared with `F.cross_entropy`, ...)."""
from __future__ import annotations

from typing import Any

from torch_lsp.shapes import ops
from torch_lsp.shapes.layers.kinds import LayerKind, Site, register
from torch_lsp.shapes.layers.requirements import class_target_rejected
from torch_lsp.shapes.ops import ShapeError
from torch_lsp.shapes.values import NONE, UNKNOWN, Bool, Layer, Str, Tensor, Value


def loss_result(site: Site, reduction: Any, prediction: Value, target: Value, class_dim: bool) -> Value:
    """Scalar for 'mean'/'sum'; the per-element shape for 'none'."""
    origin = site.here()
    if reduction in ("mean", "sum"):
        return Tensor((), False, "float", origin)
    if reduction != "none" or not isinstance(prediction, Tensor):
        return UNKNOWN
    if class_dim:
        if isinstance(target, Tensor) and target.dtype == "long":
            return target.with_origin(origin)
        if prediction.rank is None:
            return UNKNOWN
        if prediction.rank <= 1:
            return Tensor((), False, "float", origin)
        return Tensor(prediction.dims[:1] + prediction.dims[2:], False, "float", origin)
    if isinstance(target, Tensor):
        try:
            return ops.broadcast([prediction, target], origin)
        except ShapeError:
            return UNKNOWN
    return prediction.with_origin(origin)


def requested_reduction(args: list[Value], kwargs: dict[str, Value], positional: int) -> Any:
    """The reduction a loss's arguments ask for: `reduction=` ('mean' when absent), or what the
    deprecated `size_average` / `reduce` flags make of it, which override it when given
    (`nn.KLDivLoss(size_average=False, reduce=False)` is 'none', `reduce=True` with
    `size_average=False` is 'sum'); UNKNOWN when they are not constants, or when more than
    the `positional` arguments the caller reads (input, target, weight) are passed by position
    (the legacy flags' places differ from loss to loss)."""
    if len(args) > positional:
        return UNKNOWN
    if "size_average" in kwargs or "reduce" in kwargs:
        flags = []
        for name in ("size_average", "reduce"):
            value = kwargs.get(name, NONE)
            if value is NONE:
                flags.append(True)  # None means the default, True
            elif isinstance(value, Bool) and value.value is not None:
                flags.append(value.value)
            else:
                return UNKNOWN
        size_average, reduce = flags
        return "mean" if size_average and reduce else ("sum" if reduce else "none")
    reduction = kwargs.get("reduction")
    return reduction.value if isinstance(reduction, Str) else ("mean" if reduction is None else UNKNOWN)


LOSSES: set[str] = set()  # every loss kind's name: built with only `reduction` kept (and class weights)
CLASS_WEIGHTED = ("CrossEntropyLoss", "NLLLoss")  # their first parameter: one weight per class
# Losses whose first constructor parameter is a weight (read positionally; the rest are keywords).
WEIGHT_FIRST = (*CLASS_WEIGHTED, "BCELoss", "BCEWithLogitsLoss", "MultiLabelSoftMarginLoss")


def _loss_kinds(class_dim: bool, *names: str) -> None:
    """Losses whose input has a class dim (cross entropy: dim 1) or is compared element by element."""
    for name in names:
        register(LayerKind(name, (), _loss_forward(class_dim),
                           lambda l, name=name: f"{name}(reduction={l.get('reduction')!r})"))
        LOSSES.add(name)


def _loss_forward(class_dim: bool):
    def forward(site: Site, layer: Layer, args: list, kwargs: dict) -> Value:
        prediction = args[0] if args else kwargs.get("input")
        target = args[1] if len(args) > 1 else kwargs.get("target")
        if class_dim:
            name = layer.kind.name
            class_target_rejected(site, f"`{site.callee}` ({name})", prediction or UNKNOWN, target or UNKNOWN,
                                  layer.get("weight"), probabilities=name == "CrossEntropyLoss")
        return loss_result(site, layer.get("reduction"), prediction or UNKNOWN, target or UNKNOWN, class_dim)
    return forward


_loss_kinds(True, "CrossEntropyLoss", "NLLLoss")
_loss_kinds(False, "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss", "BCEWithLogitsLoss", "KLDivLoss",
            "SoftMarginLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MultiLabelSoftMarginLoss")
