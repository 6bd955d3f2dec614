"""What ops and layers require of their inputs besides matching sizes, checked only where the
answer is certain, for the functional forms (`functions/`) and the layers alike:

    rank_rejected      the input's rank (`max_pool2d` takes 3-d or 4-d, `Dropout2d` at least 2-d)
    dim_rejected       a `dim` argument within the input's rank (`log_softmax(x, dim=4)` on 4-d)
    flatten_rejected   `flatten`'s dims, the start not after the end
    pool_rejected      pooling padding at most half the kernel, an output of at least one element
    conv_rejected      a convolution output of at least one element
    class_target_rejected   the target and class weights of `nll_loss`/`cross_entropy`
    float_indices      a floating-point tensor used as indices (TL503)
    mixed_product      an integer tensor multiplied with a floating-point one (TL503)

The checks report through the site (kind "shape": TL501, "dtype": TL503) and return True when
they did, so the rule can stop there; the last two return the message instead (the `@` and
`x[i]` operators report from the interpreter, which has no site).  Every condition here is one PyTorch itself raises on (the
tests run each one with torch); a size or dtype not known never reports.
"""
from __future__ import annotations

from typing import Sequence

from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.ops import concrete, describe, surely_differ
from torch_lsp.shapes.values import Tensor, Value

DTYPE_WORDS = {"float": "floating-point", "long": "integer", "bool": "bool"}


def _ranks_text(ranks: Sequence[int] | None, at_least: int | None) -> str:
    if at_least is not None:
        return f"an input of at least {at_least} dims"
    words = [f"{r}-d" for r in ranks or ()]
    return "a " + (" or ".join(words) if len(words) <= 2 else ", ".join(words[:-1]) + " or " + words[-1]) + " input"


def rank_rejected(site, what: str, x: Tensor, ranks: Sequence[int] | None = None,
                  at_least: int | None = None) -> bool:
    """`x`'s known rank is not one of `ranks` (or below `at_least`): report it."""
    if x.rank is None:
        return False
    if at_least is not None:
        if x.rank >= at_least:
            return False
    elif ranks is None or x.rank in ranks:
        return False
    site.fail(f"{what} takes {_ranks_text(ranks, at_least)}, but it is given {describe(x)}")
    return True


def dim_rejected(site, what: str, x: Tensor, dim: int | None, extra: int = 0) -> bool:
    """`dim` is outside the dims of `x` (a 0-d tensor has dims -1 and 0, as in PyTorch;
    `extra` 1 for ops that insert a dim, `unsqueeze`)."""
    if dim is None or x.rank is None:
        return False
    size = max(x.rank, 1) + extra
    if -size <= dim < size:
        return False
    site.fail(f"{what} uses dim {dim}, but for {describe(x)} a dim must be from {-size} to {size - 1}")
    return True


def flatten_rejected(site, what: str, x: Tensor, start: int, end: int) -> bool:
    """`flatten(start_dim, end_dim)`: both dims of `x`, and `start_dim` not after `end_dim`."""
    if x.rank is None:
        return False
    if dim_rejected(site, what, x, start) or dim_rejected(site, what, x, end):
        return True
    size = max(x.rank, 1)
    if start % size > end % size:
        site.fail(f"{what} flattens from dim {start} to dim {end} of {describe(x)}: the start comes after the end")
        return True
    return False


def pool_rejected(site, what: str, x: Tensor, sizes: Sequence[Dim | None], kernel, stride, padding, dilation,
                  outputs: Sequence[Dim | None]) -> bool:
    """Padding more than half the (effective) kernel, or an output size below one."""
    for k, p, d in zip(kernel or (), padding or (), dilation or ()):
        k, p, d = concrete(k), concrete(p), concrete(d)
        # PyTorch checks `pad <= kernel // 2` on some paths and `pad <= ((kernel-1)*dilation+1) // 2`
        # on others: a padding past both raises on every path.
        if None not in (k, p, d) and 2 * p > k and 2 * p > (k - 1) * d + 1:
            site.fail(f"{what} pads {p} on each side of a kernel of {k}: padding must be at most half the kernel")
            return True
    return _output_too_small(site, what, x, sizes, outputs)


def conv_rejected(site, what: str, x: Tensor, sizes: Sequence[Dim | None], outputs: Sequence[Dim | None]) -> bool:
    """A convolution whose (padded, dilated) kernel is larger than its input: no output left."""
    return _output_too_small(site, what, x, sizes, outputs)


def _output_too_small(site, what: str, x: Tensor, sizes: Sequence[Dim | None], outputs: Sequence[Dim | None]) -> bool:
    for size, out in zip(sizes, outputs):
        value = concrete(out)
        if value is not None and value <= 0 and concrete(size) is not None:
            site.fail(f"{what} leaves an output size of {value} from the spatial size {concrete(size)} of "
                      f"{describe(x)}")
            return True
    return False


def class_target_rejected(site, what: str, prediction: Value, target: Value, weight: Value | None,
                          probabilities: bool) -> None:
    """`nll_loss`/`cross_entropy`: the target holds one class index per input element but the
    class dim (dim 1, or dim 0 of a 1-d input): the same batch, one dim fewer, the same other
    sizes, and int64; `probabilities` (cross entropy): a float target of the input's shape is
    also accepted.  Class weights: one per class."""
    if not isinstance(target, Tensor) or not isinstance(prediction, Tensor):
        return
    rank, target_rank = prediction.rank, target.rank
    as_probabilities = probabilities and rank is not None and target_rank == rank
    if target.dtype == "float" and (not probabilities or (rank is not None and target_rank == rank - 1)):
        site.fail(f"{what} takes class indices as an int64 target, but it is given a floating-point "
                  f"target {describe(target)}", "dtype")
    if rank is None or target_rank is None or as_probabilities:
        return
    if _target_shape_rejected(site, what, prediction, target) or rank < 1:
        return
    if isinstance(weight, Tensor) and weight.rank == 1:
        classes = prediction.dims[1] if rank >= 2 else prediction.dims[0]
        if concrete(classes) is not None and surely_differ(weight.dims[0], classes):
            site.fail(f"{what} weighs {weight.dims[0].render()} classes with {describe(weight)}, but "
                      f"{describe(prediction)} has {classes.render()} classes in dim {1 if rank >= 2 else 0}")


def _target_shape_rejected(site, what: str, prediction: Tensor, target: Tensor) -> bool:
    rank, target_rank = prediction.rank, target.rank
    if rank < 2:
        return False  # a 1-d input takes a 0-d or a 1-element target
    expected = prediction.dims[:1] + prediction.dims[2:]
    if target_rank != rank - 1:
        site.fail(f"{what} takes a {rank - 1}-d target of class indices for {describe(prediction)}, "
                  f"but it is given {describe(target)}")
        return True
    for position, (own, wanted) in enumerate(zip(target.dims, expected)):
        if surely_differ(own, wanted):
            which = "batch size" if position == 0 else f"size in dim {position}"
            site.fail(f"{what} takes a target of shape [{', '.join(_render(d) for d in expected)}] for "
                      f"{describe(prediction)}, but the target {describe(target)} has another {which}")
            return True
    return False


def _render(dim: Dim | None) -> str:
    return "?" if dim is None else dim.render()


def float_indices(what: str, index: Value) -> str | None:
    """A floating-point tensor used where PyTorch takes integer indices: the message (TL503)."""
    if not isinstance(index, Tensor) or index.dtype != "float":
        return None
    return f"{what} takes integer indices, but it is given a floating-point tensor {describe(index)}"


def mixed_product(what: str, a: Tensor, b: Tensor) -> str | None:
    """A matrix product of an integer (or bool) tensor with a floating-point one, which PyTorch
    does not promote: the message (TL503)."""
    kinds = {a.dtype, b.dtype}
    if "float" not in kinds or not kinds & {"long", "bool"}:
        return None
    return (f"{what} multiplies {DTYPE_WORDS[a.dtype]} {describe(a)} by {DTYPE_WORDS[b.dtype]} {describe(b)}: "
            "a matrix product needs both in one dtype")
