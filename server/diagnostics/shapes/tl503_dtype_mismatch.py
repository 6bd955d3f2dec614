"""TL503 dtype-mismatch: flags operations given tensors whose dtypes are statically known and
rejected by the op: floating-point class indices for `nll_loss`/`cross_entropy`, floating-point
indices for `Embedding`/`gather`/`index_select`/indexing, and integer tensors multiplied with
floating-point ones (`@`, `matmul`, `mm`, `bmm`, `Linear`).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.diagnostics.shapes.mismatch_findings import mismatch_findings

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class DtypeMismatch(Rule):
    """## What it does
    Flags operations given tensors whose dtypes are statically known and that the operation
    rejects: a floating-point target of class indices for `F.nll_loss`, `F.cross_entropy`,
    `nn.NLLLoss` or `nn.CrossEntropyLoss` (a target made by `torch.rand`, or one that went
    through `.float()`), floating-point indices for `nn.Embedding`, `F.embedding`,
    `gather`, `index_select` or `x[idx]`, and an integer tensor multiplied with a
    floating-point one (`@`, `matmul`, `mm`, `bmm`, or an integer tensor into `nn.Linear`).
    Dtypes come from factories (`torch.rand` is float, `torch.randint` and `torch.arange`
    of ints are int64), casts (`.float()`, `.long()`, `.to(torch.float16)`) and the ops in
    between; only definite errors are reported: an unknown dtype stays unknown.

    ## Why is this bad
    Each of these raises the first time the line runs (`expected scalar type Long but found
    Float`, `tensors used as indices must be long, int, byte or bool tensors`, `expected m1
    and m2 to have the same dtype`), often after minutes of data loading. A cross-entropy
    target in floating point is only accepted as class probabilities, with the same shape
    as the input.

    ## Example
    ```python
    logits = model(x)                      # [B, 10]
    labels = torch.rand(B) * 10            # float
    loss = F.cross_entropy(logits, labels) # class indices must be int64
    ```

    ## Use instead
    ```python
    labels = torch.randint(0, 10, (B,))
    loss = F.cross_entropy(logits, labels)
    ```

    ## Fix safety
    No automatic fix: a `.long()` would silence the error but truncate values that may
    not be class indices at all.
    """

    code = "TL503"
    needs_shapes = True
    whole_file = True  # the shape pass's mismatches are listed for the whole file
    name = "dtype-mismatch"
    severity = "error"
    fix_safety = "none"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        return mismatch_findings(self, analysis, "dtype")
