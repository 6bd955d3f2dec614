"""TL406 data-parallel: flags `nn.DataParallel(...)`."""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule


@register
class DataParallelUse(Rule):
    """
    ## What it does
    Flags `nn.DataParallel(...)`.

    ## Why is this bad
    `DataParallel` runs one process with a thread per GPU, replicates the model every
    forward pass and gathers outputs on one device; it is slower than
    `DistributedDataParallel` even on a single machine, and PyTorch recommends against it.

    ## Example
    ```python
    model = nn.DataParallel(model)
    ```

    ## Use instead
    ```python
    model = DistributedDataParallel(model.to(local_rank), device_ids=[local_rank])  # launched with torchrun
    ```
    """

    code = "TL406"
    name = "data-parallel"
    severity = "warning"
    fix_safety = "none"

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.calls_to("torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                                      "torch.nn.parallel.data_parallel.DataParallel"):
            message = (
                f"`{ast.unparse(call.func)}` replicates the model in one process on every forward pass and is "
                f"slower than `DistributedDataParallel`, even on one machine. Use `DistributedDataParallel` "
                f"(launched with `torchrun`)."
            )
            yield self.finding(call, message)
