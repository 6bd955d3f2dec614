"""`torch.nn.functional`: linear, embedding, normalisation, attention, resizing, padding, losses, and
the activations that keep their input's shape.  (Convolution and pooling: `conv_pool`.)"""
from __future__ import annotations

from torch_lsp.shapes import ops
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.functions.arguments import bool_of, dim_of, int_of, sizes_from, tensor_of
from torch_lsp.shapes.functions.elementwise import broadcast_operands, same_shape
from torch_lsp.shapes.functions.registry import FUNCTIONAL, SPECIAL, TORCH, Call, function, method, tensor_first
from torch_lsp.shapes.layers import interpolate, loss_result, pad, param_of
from torch_lsp.shapes.layers.losses import requested_reduction
from torch_lsp.shapes.layers.requirements import (
    class_target_rejected, dim_rejected, float_indices, mixed_product, rank_rejected,
)
from torch_lsp.shapes.ops import ONE, WILDCARD, describe
from torch_lsp.shapes.values import NONE, UNKNOWN, Int, Tensor, Value


@function("linear", within=(FUNCTIONAL,))
def _f_linear(call: Call) -> Value:
    x, weight = call.arg(0, "input"), call.arg(1, "weight")
    if not isinstance(x, Tensor) or not isinstance(weight, Tensor) or weight.rank not in (1, 2):
        return UNKNOWN
    if weight.rank == 1:
        return ops.reduce(x, [-1], False, call.origin()) if x.has_shape else UNKNOWN
    out_features, in_features = weight.dims
    mixed = mixed_product(f"`{call.site.callee}`", x, weight)
    if mixed is not None:
        call.fail(mixed, "dtype")
        return UNKNOWN
    if x.dims and ops.surely_differ(x.dims[-1], in_features):
        call.fail(f"`{call.site.callee}` applies a weight of shape {describe(weight)} to {describe(x)}: "
                  f"it expects {in_features.render()} features in the last dim")
        return UNKNOWN
    return ops.linear(x, in_features, out_features, call.origin())



@function("grid_sample", within=(FUNCTIONAL,))
def _grid_sample(call: Call) -> Value:
    """`F.grid_sample(input [N, C, H, W], grid [N, H_out, W_out, 2])` is `[N, C, H_out, W_out]`
    (and the 5-D form likewise): the output takes the grid's spatial sizes, so points sampled
    with a grid of width 1 (`coords.unsqueeze(2)`) give a size-1 last dim."""
    x, grid = call.arg(0, "input"), call.arg(1, "grid")
    if not (isinstance(x, Tensor) and isinstance(grid, Tensor)) or x.variadic or grid.variadic:
        return UNKNOWN
    if x.rank not in (4, 5) or grid.rank != x.rank:
        return UNKNOWN
    return Tensor((x.dims[0], x.dims[1], *grid.dims[1:-1]), False, x.dtype, call.origin())


@function("interpolate", "upsample", within=(FUNCTIONAL,))
def _interpolate(call: Call) -> Value:
    x = call.arg(0, "input")
    if not isinstance(x, Tensor):
        return UNKNOWN
    size = call.arg(1, "size")
    scale = call.arg(2, "scale_factor")
    size_param = param_of(size) if size is not None and size is not NONE else None
    scale_param = _scale_param(scale)
    if size_param is None and scale_param is None:
        return Tensor(x.dims[:2] + (None,) * (len(x.dims) - 2), x.variadic, x.dtype, call.origin()) \
            if x.rank is not None and x.rank >= 3 else UNKNOWN
    return interpolate(x, size_param, scale_param, call.origin())


def _scale_param(value: Value | None):
    """An integral scale factor as a Dim (2 or 2.0); None when absent or fractional/unknown."""
    if value is None or value is NONE:
        return None
    parameter = param_of(value)
    if isinstance(parameter, Dim):
        return parameter
    if isinstance(parameter, tuple) and all(isinstance(p, Dim) for p in parameter):
        return parameter
    return UNKNOWN


@function("pad", within=(FUNCTIONAL,))
def _pad(call: Call) -> Value:
    x, padding = call.arg(0, "input"), param_of(call.arg(1, "pad") or UNKNOWN)
    if not isinstance(x, Tensor) or not isinstance(padding, tuple):
        return UNKNOWN
    return pad(x, padding, call.origin())


@function("scaled_dot_product_attention", within=(FUNCTIONAL,))
def _sdpa(call: Call) -> Value:
    query, key, value = call.arg(0, "query"), call.arg(1, "key"), call.arg(2, "value")
    if not all(isinstance(t, Tensor) for t in (query, key, value)) or not query.dims or not value.dims:
        return UNKNOWN
    if ops.surely_differ(query.dims[-1], key.dims[-1] if key.dims else None):
        call.fail(f"`{call.site.callee}` compares queries {describe(query)} with keys {describe(key)}: "
                  "their last dims differ")
        return UNKNOWN
    return Tensor(query.dims[:-1] + (value.dims[-1],), query.variadic, query.dtype, call.origin())


@function("embedding", within=(FUNCTIONAL,))
def _f_embedding(call: Call) -> Value:
    x, weight = call.arg(0, "input"), call.arg(1, "weight")
    if not isinstance(x, Tensor) or not isinstance(weight, Tensor) or weight.rank != 2:
        return UNKNOWN
    problem = float_indices(f"`{call.site.callee}`", x)
    if problem is not None:
        call.fail(problem, "dtype")
        return UNKNOWN
    return Tensor(x.dims + (weight.dims[1],), x.variadic, weight.dtype, call.origin())


@function("one_hot", within=(FUNCTIONAL,))
def _one_hot(call: Call) -> Value:
    x = call.arg(0, "tensor")
    classes = dim_of(call.arg(1, "num_classes", Int(Dim.const(-1))))
    if not isinstance(x, Tensor):
        return UNKNOWN
    if classes is not None and classes.as_int() is not None and classes.as_int() < 0:
        classes = None
    return Tensor(x.dims + (classes,), x.variadic, "long", call.origin())


@function("layer_norm", within=(TORCH, FUNCTIONAL))
@function("rms_norm", within=(FUNCTIONAL,))
def _f_layer_norm(call: Call) -> Value:
    x, shape = call.arg(0, "input"), sizes_from([call.arg(1, "normalized_shape") or UNKNOWN])
    if not isinstance(x, Tensor):
        return UNKNOWN
    if shape is not None and None not in shape and WILDCARD not in shape:
        for own, wanted in zip(reversed(x.dims), reversed(shape)):
            if ops.surely_differ(own, wanted):
                call.fail(f"`{call.site.callee}` normalises {describe(x)} over its last dims, which must be "
                          f"[{', '.join(s.render() for s in shape)}]")
                return UNKNOWN
    return x


@function("glu", within=(FUNCTIONAL,))
def _f_glu(call: Call) -> Value:
    x, dim = call.arg(0, "input"), int_of(call.arg(1, "dim", Int(Dim.const(-1))))
    if not isinstance(x, Tensor) or dim is None:
        return UNKNOWN
    size = x.dim(dim)
    return ops.resize_dim(x, dim, size.floordiv(Dim.const(2)) if size is not None else None, call.origin())


@function("pixel_shuffle", within=(TORCH, FUNCTIONAL))
def _f_pixel_shuffle(call: Call) -> Value:
    x, factor = call.arg(0, "input"), dim_of(call.arg(1, "upscale_factor"))
    if not isinstance(x, Tensor) or x.rank is None or x.rank < 3 or factor is None:
        return UNKNOWN
    c, h, w = x.dims[-3:]
    channels = c.divide_exactly(factor * factor) if c is not None else None
    return Tensor(x.dims[:-3] + (channels, h * factor if h is not None else None,
                                 w * factor if w is not None else None), False, x.dtype, call.origin())


@function("cosine_similarity", within=(TORCH, FUNCTIONAL))
def _cosine(call: Call) -> Value:
    a, b = tensor_of(call.arg(0, "x1")), tensor_of(call.arg(1, "x2"))
    dim = int_of(call.arg(2, "dim", Int(ONE)))
    if a is None or b is None or dim is None:
        return UNKNOWN
    joined = broadcast_operands(call, [a, b])
    return ops.reduce(joined, [dim], False, call.origin()) if joined is not None else UNKNOWN


def _f_loss(class_dim: bool, probabilities: bool = False, weighted: bool = False):
    """`weighted`: the third parameter is a weight (read by position); the legacy flags and
    `reduction` after it are read by keyword only (`requested_reduction`)."""
    def rule(call: Call) -> Value:
        value = requested_reduction(call.args, call.kwargs, 3 if weighted or class_dim else 2)
        prediction, target = call.arg(0, "input") or UNKNOWN, call.arg(1, "target") or UNKNOWN
        if class_dim:
            class_target_rejected(call.site, f"`{call.site.callee}`", prediction, target, call.arg(2, "weight"),
                                  probabilities)
        return loss_result(call.site, value, prediction, target, class_dim)
    return rule


function("nll_loss", within=(FUNCTIONAL,))(_f_loss(class_dim=True))
function("cross_entropy", within=(FUNCTIONAL,))(_f_loss(class_dim=True, probabilities=True))
function("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div", "soft_margin_loss", "poisson_nll_loss",
         within=(FUNCTIONAL,))(_f_loss(class_dim=False))
function("binary_cross_entropy", "binary_cross_entropy_with_logits",
         within=(FUNCTIONAL,))(_f_loss(class_dim=False, weighted=True))



# activations, dropout and normalisations that keep the input's shape
function("relu", "gelu", "silu", "mish", "elu", "selu", "celu", "leaky_relu", "softplus", "softsign", "hardtanh",
         "hardswish", "hardsigmoid", "relu6", "sigmoid", "tanh", "logsigmoid", "dropout", "dropout3d",
         "alpha_dropout", "normalize",
         "batch_norm", "instance_norm", "group_norm", "local_response_norm", "tanhshrink", "softshrink",
         "hardshrink", "threshold", "prelu", "rrelu", "gumbel_softmax", within=(FUNCTIONAL,))(tensor_first(same_shape))
function("expit", within=(SPECIAL,))(tensor_first(same_shape))


@method("softmax", "log_softmax", "softmin", also_torch=True)
def _softmax(call: Call, x: Tensor) -> Value:
    """`x.softmax(dim)`, `torch.softmax(x, dim)`: the same shape; `dim` must be one of `x`'s."""
    if dim_rejected(call.site, f"`{call.site.callee}`", x, int_of(call.arg(0, "dim"))):
        return UNKNOWN
    return x


function("softmax", "log_softmax", "softmin", within=(FUNCTIONAL,))(tensor_first(_softmax))
function("softmax", "log_softmax", within=(SPECIAL,))(tensor_first(_softmax))


def _f_feature_dropout(ranks: tuple[int, ...] | None, at_least: int | None, only_training: bool):
    """`F.dropout1d` takes 2-d or 3-d inputs; `F.dropout2d` at least 2-d, while training."""
    def rule(call: Call) -> Value:
        x = call.arg(0, "input")
        if not isinstance(x, Tensor):
            return UNKNOWN
        if only_training and bool_of(call.arg(2, "training"), True) is not True:
            return x
        return UNKNOWN if rank_rejected(call.site, f"`{call.site.callee}`", x, ranks, at_least) else x
    return rule


function("dropout1d", within=(FUNCTIONAL,))(_f_feature_dropout((2, 3), None, only_training=False))
function("dropout2d", within=(FUNCTIONAL,))(_f_feature_dropout(None, 2, only_training=True))


@function("pairwise_distance", within=(FUNCTIONAL,))
def _unknown_shape(call: Call) -> Value:
    return UNKNOWN
