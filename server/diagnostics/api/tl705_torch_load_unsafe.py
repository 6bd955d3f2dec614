"""TL705 torch-load-unsafe: `torch.load(...)` without `weights_only`."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.catalogue import at_least, version_text
from torch_lsp.diagnostics.api.uses import calls_of
from torch_lsp.diagnostics.base import Finding, FixInfo, Rule
from torch_lsp.syntax_nodes import argument, has_star_args, keyword, node_text

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

SAFE_DEFAULT_FROM = "2.6"  # `weights_only` defaults to True from this release


def passes_pickle_module(call) -> bool:
    return argument(call, 2, "pickle_module") is not None


@register
class TorchLoadUnsafe(Rule):
    """## What it does
    Flags `torch.load(...)` without `weights_only=`.  On a `target-version` before 2.6 it
    is a warning; from 2.6, where `weights_only` defaults to True, it is information: the
    same file still unpickles anything when run on an older PyTorch.

    ## Why is this bad
    Before 2.6, `torch.load` unpickles whatever the file holds, and unpickling runs code:
    a checkpoint downloaded from the internet can execute anything on the machine.

    ## Example
    ```python
    state = torch.load("checkpoint.pt")
    ```

    ## Use instead
    ```python
    state = torch.load("checkpoint.pt", weights_only=True)
    ```

    ## Fix safety
    Adds `weights_only=True`, the default of PyTorch 2.6 and later (not offered when a
    `pickle_module` is given): safe on a `target-version` of 2.6 or later, where it only
    states the default; unsafe before, where a checkpoint that pickles more than tensors and
    plain containers then fails to load (allow its types with
    `torch.serialization.add_safe_globals`).
    """

    code = "TL705"
    name = "torch-load-unsafe"
    severity = "warning"
    fix_safety = "safe"
    fix_only_where_exact = True

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        version = analysis.torch_version
        safe_default = at_least(version, SAFE_DEFAULT_FROM)
        for call in calls_of(analysis, "torch.load"):
            if keyword(call, "weights_only") is not None or has_star_args(call):
                continue
            name = node_text(analysis.lines, call.func)
            title = None if passes_pickle_module(call) else "Add `weights_only=True`"
            if safe_default:
                message = (f"`{name}(...)` without `weights_only`: {version_text(version)} loads only weights by "
                           f"default, but PyTorch before {SAFE_DEFAULT_FROM} unpickles anything the file holds, "
                           "which can run code. Pass `weights_only=True` so every version loads it safely.")
            else:
                message = (f"`{name}(...)` without `weights_only` unpickles anything the file holds on "
                           f"{version_text(version)}, and unpickling can run arbitrary code. Pass `weights_only=True` "
                           "(or `weights_only=False` only for files you trust).")
            finding = self.finding(call, message, title)
            if safe_default:
                finding.severity = "information"
            elif finding.fix is not None:
                # Before 2.6 the flag changes what loads: a checkpoint pickling more than
                # tensors then fails.  Only where it is the default already is it safe.
                finding.fix = FixInfo(finding.fix.title, "unsafe")
            yield finding
