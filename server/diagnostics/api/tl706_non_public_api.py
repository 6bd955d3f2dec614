"""TL706 non-public-api: a non-public alias of a public function
(`torch.utils.data._utils.collate.default_collate`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.catalogue import NON_PUBLIC, ApiChange
from torch_lsp.diagnostics.api.describe import what_is_used
from torch_lsp.diagnostics.api.replacements import replacement_plan
from torch_lsp.diagnostics.api.uses import api_uses
from torch_lsp.diagnostics.base import Finding, Rule

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

ALIASES = {private: ApiChange(private, "", f"`{public}`", public, drop_in=True) for private, public in NON_PUBLIC.items()}


@register
class NonPublicApi(Rule):
    """## What it does
    Flags uses and imports of non-public aliases of public PyTorch functions
    (`torch.utils.data._utils.collate.default_collate` and `default_convert`,
    `torch.utils.data._utils.worker.get_worker_info`), through any import.

    ## Why is this bad
    Modules under `_`-prefixed names are internal: they move or change without a
    deprecation period, and the code breaks on an upgrade.

    ## Example
    ```python
    from torch.utils.data._utils.collate import default_collate
    ```

    ## Use instead
    ```python
    from torch.utils.data.dataloader import default_collate
    ```
    """

    code = "TL706"
    name = "non-public-api"
    severity = "warning"
    fix_safety = "safe"
    fix_only_where_exact = True

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        for use in api_uses(analysis, ALIASES):
            plan = replacement_plan(analysis, use)
            yield self.finding(
                use.node,
                f"{what_is_used(analysis, use)} is a non-public alias that may move without notice. "
                f"Use the public {use.api.instead}.",
                plan.title if plan else None,
            )
