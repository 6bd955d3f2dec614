"""TL701 removed-api: a use or import of a function PyTorch has removed (`torch.solve`,
`torch.symeig`, `torch.lstsq`, `torch.eig`, `torch.matrix_rank`, `torch._six`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.catalogue import REMOVED, REMOVED_METHODS, at_least, version_text
from torch_lsp.diagnostics.api.describe import what_is_used
from torch_lsp.diagnostics.api.uses import api_uses
from torch_lsp.diagnostics.base import Finding, Rule

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


@register
class RemovedApi(Rule):
    """## What it does
    Flags uses and imports of functions that PyTorch has removed: `torch.solve`,
    `torch.symeig`, `torch.eig`, `torch.lstsq`, `torch.matrix_rank` (deprecated in 1.9,
    gone from 2.0) and the `torch._six` module — also through aliases (`import torch as T;
    T.solve(...)`, `from torch import symeig as eigh`) and as tensor methods (`a.symeig()`
    where `a` is known to be a tensor).  Judged against `target-version`; on an older
    PyTorch that still has the function, TL704 reports it as deprecated instead.

    ## Why is this bad
    The line raises `AttributeError` (or `ImportError`) on the PyTorch the project runs.

    ## Example
    ```python
    solution, _ = torch.solve(b, A)
    ```

    ## Use instead
    ```python
    solution = torch.linalg.solve(A, b)
    ```
    """

    code = "TL701"
    name = "removed-api"
    severity = "error"

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        version = analysis.torch_version
        removed = {name: api for name, api in REMOVED.items() if at_least(version, api.removed_in)}
        for use in api_uses(analysis, removed, REMOVED_METHODS):
            error = "ImportError" if use.kind == "import" else "AttributeError"
            yield self.finding(
                use.node,
                f"{what_is_used(analysis, use)} was removed in PyTorch {use.api.removed_in} (deprecated since "
                f"{use.api.since}), so this raises `{error}` on {version_text(version)}. Use {use.api.instead}.",
            )
