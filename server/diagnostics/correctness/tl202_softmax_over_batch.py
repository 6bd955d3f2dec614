"""TL202 softmax-over-batch: flags a softmax (`softmax`, `log_softmax`, `softmin`, as function,
method or `nn.Softmax(dim=0)` module) taken over dim 0 of a tensor whose dim 0 is known to be
the batch: a `torch.bmm`/`baddbmm` result, `x.view(B, -1)`, `x.flatten(1)`, `torch.zeros(B, N)`,
`B, N, C = x.shape`, or a shape comment such as `# [B, Q, N]` (and what follows from those
through `@`, indexing and element-wise ops).
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.correctness.provenance import torch_module_class, module_constructor
from torch_lsp.diagnostics.correctness.quoting import source_of
from torch_lsp.diagnostics.correctness.torch_names import (
    FUNCTIONAL_SOFTMAX,
    TORCH_SOFTMAX,
    SOFTMAX_METHODS,
    SOFTMAX_MODULES,
)
from torch_lsp.shapes.batch import inferred_shape
from torch_lsp.syntax_nodes import argument, has_star_args, int_constant, is_self_attribute

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class SoftmaxOverBatch(Rule):
    """## What it does
    Flags a softmax (`softmax`, `log_softmax`, `softmin`, as function, method or
    `nn.Softmax(dim=0)` module) taken over dim 0 of a tensor whose dim 0 is known to be
    the batch: a `torch.bmm`/`baddbmm` result, a product with an operand transposed
    behind dim 1 (`q @ k.transpose(1, 2)`), `x.view(B, -1)`, `x.flatten(1)`,
    `torch.zeros(B, N)`, `B, N, C = x.shape`, or a shape comment such as `# [B, Q, N]`
    (and what follows from those through `@`, indexing and element-wise ops).
    Sequence-first layouts (`[T, B, D]`) and batch-by-batch matrices are not reported.

    ## Why is this bad
    Normalising across the batch makes each sample's probabilities depend on which
    other samples share its batch: results change with the batch size and order,
    and evaluation no longer matches training. It raises no error, so it survives
    until someone notices the metrics.

    ## Example
    ```python
    scores = torch.bmm(q, k.transpose(1, 2))  # [B, Q, N]
    attn = F.softmax(scores, dim=0)
    ```

    ## Use instead
    ```python
    scores = torch.bmm(q, k.transpose(1, 2))  # [B, Q, N]
    attn = F.softmax(scores, dim=-1)
    ```
    """

    code = "TL202"
    needs_shapes = True
    name = "softmax-over-batch"
    severity = "warning"
    fix_safety = "unsafe"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for call in analysis.calls:
            form = softmax_application(analysis, call)
            if form is None:
                continue
            reported, tensor, dim = form
            axis = int_constant(dim)
            if axis is None or axis > 0:
                continue
            shape = inferred_shape(analysis, tensor)
            if shape is None or shape.rank < 2 or not shape.batch_first:
                continue
            if axis != 0 and (not shape.rank_known or axis != -shape.rank):
                continue
            name = source_of(analysis, tensor, 40)
            origin = "" if shape.stated_by is tensor else f" (from {shape.origin})"
            subject = f"`{source_of(analysis, call)}`"
            if reported is not call and reported is not call.func:
                subject = f"`{source_of(analysis, reported)}` (applied as {subject} on line {call.lineno})"
            yield self.finding(
                reported,
                f"{subject} normalises across the batch: dim {axis} of `{name}` is the batch"
                f"{origin}, so each sample's probabilities depend on the rest of its batch. "
                "Use `dim=-1` (or the axis you mean).",
                f"Replace `dim={axis}` with `dim=-1`",
            )


def softmax_application(analysis: "Analysis", call: ast.Call) -> tuple[ast.AST, ast.AST, ast.AST | None] | None:
    """(node to report, input tensor, dim argument) for a softmax-family call, else None."""
    # The cheap tests first: the shape rules ask this of every call of the file, on each edit.
    qualname = analysis.call_qualname(call)
    if qualname in FUNCTIONAL_SOFTMAX or qualname in TORCH_SOFTMAX:
        tensor = argument(call, 0, "input")
        return (call, tensor, argument(call, 1, "dim")) if tensor is not None and not has_star_args(call) else None
    if qualname is None and isinstance(call.func, ast.Attribute) and call.func.attr in SOFTMAX_METHODS:
        return (call, call.func.value, argument(call, 0, "dim")) if not has_star_args(call) else None
    if len(call.args) != 1 or call.keywords or not _may_run_a_module(call.func) or has_star_args(call):
        return None
    constructor = module_constructor(analysis, call.func)  # `nn.Softmax(dim=0)(x)`, `self.softmax(x)`
    if torch_module_class(analysis, constructor) in SOFTMAX_MODULES and not has_star_args(constructor):
        return constructor, call.args[0], argument(constructor, 0, "dim")
    return None


def _may_run_a_module(func: ast.AST) -> bool:
    """`m(x)`, `self.m(x)` or `nn.Softmax(dim=0)(x)`."""
    if isinstance(func, (ast.Name, ast.Call)):
        return True
    return is_self_attribute(func)
