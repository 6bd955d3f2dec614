"""TL405 dataloader-defaults: flags a `DataLoader(...)` without `num_workers` (or with
`num_workers=0`), and one without `pin_memory=True` in a file that moves its batches to the GPU.
"""
from __future__ import annotations

import ast
from typing import Iterator

from torch_lsp.analysis import Analysis
from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.base import Finding, Rule
from torch_lsp.syntax_nodes import argument, has_star_args


@register
class DataLoaderDefaults(Rule):
    """
    ## What it does
    Flags a `DataLoader(...)` without `num_workers` (or with `num_workers=0`), and one
    without `pin_memory=True` in a file that moves its batches to the GPU.

    ## Why is this bad
    With no workers, loading and augmenting each batch happens in the training process and
    the GPU waits for it; without pinned memory, host-to-device copies cannot overlap with
    compute (`non_blocking=True` has no effect).

    ## Example
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True)
    ```

    ## Use instead
    ```python
    loader = DataLoader(dataset, batch_size=64, shuffle=True, num_workers=4, pin_memory=True)
    ```
    """

    code = "TL405"
    name = "dataloader-defaults"
    severity = "information"
    fix_safety = "unsafe"

    _LOADERS = {"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"}

    def check(self, analysis: Analysis) -> Iterator[Finding]:
        for call in analysis.calls_to(*self._LOADERS):
            if has_star_args(call):
                continue
            problems, fixes = [], []
            if analysis.is_test_file or self._toy_dataset(call):
                continue
            workers = argument(call, 5, "num_workers")
            if workers is None or (isinstance(workers, ast.Constant) and workers.value == 0):
                problems.append("loads batches in the main process (no `num_workers`)"
                                if workers is None else "uses `num_workers=0`, so batches load in the main process")
                fixes.append("num_workers=4")
            if argument(call, 7, "pin_memory") is None and analysis.moves_to_accelerator(batches_only=True):
                problems.append("does not pin memory although batches are moved to the GPU")
                fixes.append("pin_memory=True")
            if problems:
                message = (
                    f"This `DataLoader` {' and '.join(problems)}; the GPU waits on data. "
                    f"Add `{', '.join(fixes)}`."
                )
                yield self.finding(call, message, f"Add `{', '.join(fixes)}`", data={"add": fixes})


    def _toy_dataset(self, call: ast.Call) -> bool:
        """`DataLoader(range(10))`, `DataLoader([...])`: nothing to load in parallel."""
        dataset = argument(call, 0, "dataset")
        if isinstance(dataset, (ast.List, ast.Tuple)):
            return True
        return isinstance(dataset, ast.Call) and isinstance(dataset.func, ast.Name) and dataset.func.id in ("range", "list")
