"""TL203 view-after-transpose: flags `.view(...)` on the result of `transpose`, `permute`, `t`,
`.T`, `.mT`, `swapaxes` or `movedim` (chained, or through a local variable) with no
`.contiguous()` in between, when the new shape merges dims the transpose moved.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.correctness.provenance import MAX_DEPTH, followed
from torch_lsp.diagnostics.correctness.quoting import source_of
from torch_lsp.diagnostics.correctness.transposes import (
    is_identity_transpose,
    is_transposing,
    looks_like_dtype,
    permutation,
    transposed_tensor,
)
from torch_lsp.diagnostics.correctness.view_merges import (
    WILDCARD,
    dim_of,
    size_reference,
    size_symbol,
    view_merges,
)
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.batch import BATCH_NAME
from torch_lsp.shapes.dims import Dim
from torch_lsp.shapes.values import Layer
from torch_lsp.roles import self_attribute_values
from torch_lsp.syntax_nodes import (
    argument, call_name, dotted, has_star_args, int_constant, is_none, is_self_attribute,
)

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class ViewAfterTranspose(Rule):
    """## What it does
    Flags `.view(...)` on the result of `transpose`, `permute`, `t`, `.T`, `.mT`,
    `swapaxes` or `movedim` (chained, or through a local variable) with no
    `.contiguous()` in between, when the new shape merges dims the transpose moved.

    ## Why is this bad
    A transpose only changes strides; the elements stay where they were. `view` can
    merge dims only when they are adjacent in memory, so merging dims that the
    transpose separated raises `RuntimeError: view size is not compatible with input
    tensor's size and stride`. Merges that happen to line up still break as soon as
    the input arrives sliced or otherwise non-contiguous (not so for a tensor the code just
    computed with `matmul`, `@`, `cat` or `stack`, or by a `Linear` or `Embedding` layer:
    always contiguous, it is not flagged; nor is a convolution's output whose view merges only
    spatial dims, which keep their order in memory in either layout).

    ## Example
    ```python
    B, h, N, d = x.shape
    return x.transpose(1, 2).view(B, N, h * d)
    ```

    ## Use instead
    ```python
    B, h, N, d = x.shape
    return x.transpose(1, 2).reshape(B, N, h * d)
    ```
    """

    code = "TL203"
    needs_shapes = True  # ranks and sizes come from the shape pass: sent in the second step
    name = "view-after-transpose"
    severity = "error"
    fix_safety = "safe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.iter_calls("view"):
            if not _is_shape_view(analysis, call):
                continue
            transposing, via = followed(analysis, call.func.value)
            if not is_transposing(analysis, transposing) or is_identity_transpose(analysis, transposing):
                continue
            if _undoes_a_transpose(analysis, transposing):
                continue
            verdict = view_verdict(analysis, call, transposing, via)
            if verdict is None:
                continue
            yield self.finding(call, self._message(analysis, call, transposing, via, verdict),
                               "Replace `.view(...)` with `.reshape(...)`")

    @staticmethod
    def _message(analysis: "Analysis", call: ast.Call, transposing: ast.AST, via: ast.Name | None, verdict: str) -> str:
        view = ".view(" + ", ".join(source_of(analysis, arg, 30) for arg in call.args) + ")"
        origin = f"`{source_of(analysis, transposing)}`"
        if via is not None:
            origin = f"`{via.id}` ({origin} on line {transposing.lineno})"
        if verdict == "raises":
            return (
                f"`{view}` merges dims that {origin} moved apart, so they are not adjacent in memory and `view` "
                "raises a RuntimeError (\"view size is not compatible with input tensor's size and stride\"). "
                "Use `.reshape(...)` (or call `.contiguous()` first)."
            )
        tensor = source_of(analysis, transposed_tensor(analysis, transposing), 30)
        if verdict == "channels_last":
            return (
                f"`{view}` merges dims that {origin} moved apart: `view` succeeds only when `{tensor}` is stored "
                "channels-last, and raises a RuntimeError for the default contiguous layout. "
                "Use `.reshape(...)`, which copies only when it has to."
            )
        return (
            f"`{view}` merges dims that {origin} reordered; `view` succeeds only while `{tensor}` is contiguous "
            "and raises a RuntimeError for sliced or otherwise non-contiguous input. "
            "Use `.reshape(...)`, which copies only when it has to."
        )


def _undoes_a_transpose(analysis: "Analysis", transposing: ast.AST) -> bool:
    """`w.t().t()` or `wt.t()` with `wt = w.t()`: the second transpose may restore memory order;
    also through elementwise arithmetic on the first (`(ps.permute(0, 2, 1) + bias).permute(0, 2, 1)`):
    its result is laid out like its transposed operand, so the second permute may restore it too."""
    tensor = transposed_tensor(analysis, transposing)
    value, _ = followed(analysis, tensor) if tensor is not None else (None, None)
    return tensor is None or _laid_out_by_a_transpose(analysis, tensor) or _laid_out_by_a_transpose(analysis, value)


def _laid_out_by_a_transpose(analysis: "Analysis", expr: ast.AST | None) -> bool:
    """A transposed tensor, or elementwise arithmetic with one as an operand (not `@`, which
    makes a new contiguous tensor)."""
    if expr is None:
        return False
    if is_transposing(analysis, expr):
        return True
    if isinstance(expr, ast.BinOp) and not isinstance(expr.op, ast.MatMult):
        return any(is_transposing(analysis, side) or is_transposing(analysis, followed(analysis, side)[0])
                   for side in (expr.left, expr.right))
    return False


def _is_shape_view(analysis: "Analysis", call: ast.Call) -> bool:
    """`t.view(B, N, C)`, not `t.view(torch.float16)` (a dtype view) nor `torch.*.view`."""
    if not isinstance(call.func, ast.Attribute) or call.func.attr != "view":
        return False
    if analysis.call_qualname(call) is not None or call.keywords or not call.args or has_star_args(call):
        return False
    return not (len(call.args) == 1 and looks_like_dtype(analysis, call.args[0]))


def view_verdict(analysis: "Analysis", view: ast.Call, transposing: ast.AST, via: ast.Name | None) -> str | None:
    """"raises" when the view surely merges dims the transpose separated (for a contiguous
    input), "channels_last" when that permute is the one a channels-last input undoes,
    "layout" when it merges moved dims that happen to stay in memory order, None when the
    view is fine or we cannot tell."""
    tensor = transposed_tensor(analysis, transposing)
    if tensor is None:
        return None
    report = infer_shapes(analysis)
    known = report.symbolic_tensor_at(tensor)
    if known is not None and known.rank is None:
        known = None
    order = permutation(analysis, transposing, known.rank if known else None)
    if order is None:
        return None if handles_unit_dims(analysis, tensor) else _flatten_verdict(analysis, view, transposing)
    if known is not None and known.rank != len(order):
        return None
    base_dims = _symbolic_dims(tensor, known, len(order))
    dims = [(base_dims[old], old, new) for new, old in enumerate(order)]

    def resolve(reference: ast.AST, index: int) -> Dim | None:
        name = dotted(reference)
        if name is not None and name == dotted(tensor) and -len(base_dims) <= index < len(base_dims):
            return base_dims[index]
        if via is not None and name == via.id and -len(dims) <= index < len(dims):
            return dims[index][0]
        return None

    sizes = _view_sizes(view, report.symbolic_size_at, resolve)
    groups = view_merges(dims, sizes) if sizes is not None else None
    if groups is None:
        verdict = None if handles_unit_dims(analysis, tensor) else _rank_verdict(view, dims)
    elif any(not g.keeps_memory_order for g in groups):
        # Sizes the shape pass does not know may be 1 where the tensor was unsqueezed, or
        # where the view's own literal 1 says so (`hidden.permute(1, 0, 2).view(1, -1)` on the
        # state of a batch of one), as `_rank_verdict` assumes.
        unit_sizes = handles_unit_dims(analysis, tensor) or _names_a_unit_size(view)
        verdict = None if known is None and unit_sizes else "raises"
    else:
        verdict = "layout" if any(g.moved for g in groups) and not _freshly_computed(analysis, tensor, groups) \
            else None
    if verdict == "raises" and is_channels_last_permutation(order):
        return "channels_last"  # contiguous again when the input is stored channels-last
    return verdict


# Ops whose result is a new tensor in the default contiguous layout, never a view of their input.
_FRESH_RESULTS = {"torch.matmul", "torch.bmm", "torch.mm", "torch.cat", "torch.stack", "torch.zeros", "torch.ones",
                  "torch.empty", "torch.full", "torch.rand", "torch.randn"}


# Layers whose output is a new tensor in the default contiguous layout, whatever their input.
_FRESH_LAYERS = {"Linear", "Embedding"}
# Convolutions: contiguous, or channels-last for a channels-last input; either way the spatial
# dims (2 and after) keep their memory order among themselves.
_CONVOLUTIONS = {"Conv1d", "Conv2d", "Conv3d"}


def _freshly_computed(analysis: "Analysis", tensor: ast.AST, groups) -> bool:
    """The transposed tensor is bound to (or is) a `matmul`/`@`/`cat`-style result: contiguous
    whatever its inputs were, so a merge that keeps memory order always views it
    (BasicSR's DUF: `out = torch.matmul(x, filters)`, then `out.permute(0, 3, 4, 1, 2).view(...)`).
    So is the output of a `Linear` or `Embedding` layer, and for merges of spatial dims only,
    that of a convolution (a ViT's patch embedding: `x = self.conv(x)`, then
    `x.permute(2, 3, 0, 1).view(h * w, bs, c)`)."""
    value, _ = followed(analysis, tensor)
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.MatMult):
        return True
    if not isinstance(value, ast.Call):
        return False
    if analysis.call_qualname(value) in _FRESH_RESULTS:
        return True
    layer = infer_shapes(analysis).value_of(value.func)
    if not isinstance(layer, Layer):
        return False
    return layer.kind.name in _FRESH_LAYERS or layer.kind.name in _CONVOLUTIONS and all(
        min(g.old_order) >= 2 for g in groups if g.moved)


def is_channels_last_permutation(order: tuple[int, ...]) -> bool:
    """`(0, 2, 3, 1)` (NCHW -> NHWC) and `(0, 2, 3, 4, 1)`: the permutes that turn a
    channels-last tensor into a contiguous one."""
    return len(order) in (4, 5) and order == (0, *range(2, len(order)), 1)


def _symbolic_dims(tensor: ast.AST, known, rank: int) -> list[Dim]:
    """Each dim's size as the shape pass knows it, else as `x.size(k)`, else an opaque
    symbol of its own."""
    dims = []
    for index in range(rank):
        dim = known.dims[index] if known is not None else None
        if dim is None:
            dim = Dim.symbol(size_symbol(tensor, index) or f"<dim {index}>")
        dims.append(dim)
    return dims


_PARAMETER_WRAPPERS = {"torch.nn.Parameter", "torch.nn.parameter.Parameter"}


def handles_unit_dims(analysis: "Analysis", tensor: ast.AST) -> bool:
    """The tensor went through `squeeze`/`unsqueeze`/`[None]`: size-1 dims are in play, and a
    transpose that moves only a size-1 dim keeps memory order (`w.squeeze(0).t().view(-1)`
    on a `[1, 1, T]` waveform works).  Verdicts that assume sizes > 1 stay silent then.
    Followed through local names, `self.x` attributes the class assigns once, and
    `nn.Parameter(...)` (`self._bias = nn.Parameter(bias.unsqueeze(1))`)."""
    node, steps = tensor, 0
    while node is not None and steps < MAX_DEPTH:
        steps += 1
        if isinstance(node, ast.Name):
            node, via = followed(analysis, node)
            if via is None:
                return False
        elif is_self_attribute(node):  # `self._bias`: what the class assigns it, when that is one value
            cls = analysis.context(node).function.class_node
            values = self_attribute_values(analysis, cls).get(node.attr, []) if cls is not None else []
            if len(values) != 1:
                return False
            node = values[0]
        elif isinstance(node, ast.Call) and analysis.call_qualname(node) in _PARAMETER_WRAPPERS and node.args:
            node = node.args[0]  # `nn.Parameter(bias.unsqueeze(1))`
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("squeeze", "unsqueeze", "squeeze_", "unsqueeze_"):
                return True
            node = node.func.value
        elif isinstance(node, ast.Subscript):
            index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(is_none(item) for item in index):
                return True
            node = node.value
        else:
            return False
    return False


def _rank_verdict(view: ast.Call, dims: list[tuple[Dim, int, int]]) -> str | None:
    """Sizes we cannot match symbolically, so count instead.  `view` with m sizes can keep
    at most m - 1 of the gaps between neighbouring dims; every other gap is merged.  A merged
    gap between dims that were not neighbours in order before the transpose raises, so when
    there are more such broken gaps than m - 1, the view raises whatever the sizes are
    (`(attn @ v).transpose(1, 2).view(B, N, C)` on a 4-D tensor, or
    `logits.permute(0, 2, 3, 1).view(-1, C)`).  Assumes sizes > 1: a literal 1 among the
    sizes hints at size-1 dims, and then it says nothing."""
    sizes = _view_arguments(view)
    if _names_a_unit_size(view) or (len(sizes) == 1 and not _is_flat_size(sizes[0])):
        return None  # `view(shape)`: one name may hold a whole shape
    kept = [old for dim, old, _ in dims if dim.as_int() != 1]
    rank_of = {old: rank for rank, old in enumerate(sorted(kept))}
    order = [rank_of[old] for old in kept]
    broken_gaps = sum(1 for before, after in zip(order, order[1:]) if after != before + 1)
    return "raises" if broken_gaps > len(sizes) - 1 else None


def _names_a_unit_size(view: ast.Call) -> bool:
    """A literal 1 among the sizes of `view(1, -1)`: size-1 dims are in play."""
    return any(int_constant(size) == 1 for size in _view_arguments(view))


def _view_arguments(view: ast.Call) -> list[ast.AST]:
    """The sizes of `view(B, N, C)` or `view((B, N, C))`."""
    if len(view.args) == 1 and isinstance(view.args[0], (ast.Tuple, ast.List)):
        return list(view.args[0].elts)
    return list(view.args)


def _view_sizes(view: ast.Call, known, resolve) -> list[Dim | str] | None:
    args = _view_arguments(view)
    if len(args) == 1:  # one number is the whole element count; one name may hold a whole shape
        return [WILDCARD] if _is_flat_size(args[0]) else None
    sizes = [dim_of(arg, known, resolve) for arg in args]
    return None if any(size is None for size in sizes) else sizes


def _is_flat_size(arg: ast.AST) -> bool:
    """A lone `view(n)` argument that is surely a number (`-1`, `n * m`, `x.numel()`)."""
    if int_constant(arg) is not None:
        return True
    if isinstance(arg, ast.BinOp):
        # `n * m` is a number; `(B, -1, h) + x.size()[1:]` is a whole shape (fairseq's attention).
        return not (_may_be_shape(arg.left) or _may_be_shape(arg.right))
    return isinstance(arg, ast.Call) and call_name(arg) == "numel"


def _may_be_shape(expr: ast.AST) -> bool:
    """A tuple, a list, `x.shape`, `x.size()`, a slice of one, or an operation on one."""
    if isinstance(expr, (ast.Tuple, ast.List)):
        return True
    if isinstance(expr, ast.BinOp):
        return _may_be_shape(expr.left) or _may_be_shape(expr.right)
    if isinstance(expr, ast.Subscript):  # `x.shape[1:]` is a shape, `x.shape[0]` a number
        return isinstance(expr.slice, ast.Slice) and _may_be_shape(expr.value)
    if isinstance(expr, ast.Attribute):
        return expr.attr == "shape"
    return isinstance(expr, ast.Call) and call_name(expr) == "size" and not expr.args


def _flatten_verdict(analysis: "Analysis", view: ast.Call, transposing: ast.AST) -> str | None:
    """The rank is unknown.  Still surely raising: flattening a reordered tensor
    (`x.transpose(0, 1).view(-1)`, `w.T.view(-1)`), and `view(B, -1)` after a transpose of
    two dims behind the batch (`x.transpose(1, 2).view(B, -1)` merges the swapped pair)."""
    sizes = _view_arguments(view)
    flat = len(sizes) == 1 and _is_flat_size(sizes[0])
    keeps_batch = len(sizes) == 2 and _is_batch_size(sizes[0]) and int_constant(sizes[1]) == -1
    if not (flat or keeps_batch):
        return None
    if isinstance(transposing, ast.Attribute):  # `.T`, `.mT`: a reorder of the last dims
        return "raises" if flat else None
    if call_name(transposing) not in ("transpose", "swapaxes", "swapdims") or len(transposing.args) < 2:
        return None
    first, second = (int_constant(a) for a in transposing.args[-2:])
    if first is None or second is None or first == second:
        return None
    if flat:
        return "raises" if (first < 0) == (second < 0) else None
    return "raises" if first >= 1 and second >= 1 else None


def _is_batch_size(expr: ast.AST) -> bool:
    """`B`, `batch_size`, `self.batch_size`, `x.size(0)`, `x.shape[0]`: a size that names the batch."""
    if isinstance(expr, ast.Name):
        return bool(BATCH_NAME.match(expr.id))
    if isinstance(expr, ast.Attribute):
        return bool(BATCH_NAME.match(expr.attr)) and len(expr.attr) > 1
    reference = size_reference(expr)
    return reference is not None and reference[1] == 0
