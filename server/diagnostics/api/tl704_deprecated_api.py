"""TL704 deprecated-api: a use or import of a deprecated PyTorch function (`torch.qr`,
`torch.cuda.amp.autocast`, `functorch.vmap`, ...), with the version that deprecated it."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from torch_lsp.diagnostics import register
from torch_lsp.diagnostics.api.catalogue import (DEPRECATED, DEPRECATED_METHODS, REMOVED, REMOVED_METHODS,
                                                 ApiChange, at_least)
from torch_lsp.diagnostics.api.describe import advice_for, what_is_used
from torch_lsp.diagnostics.api.replacements import replacement_plan
from torch_lsp.diagnostics.api.uses import api_uses
from torch_lsp.diagnostics.base import Finding, FixInfo, Rule

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


def deprecated_for(version: tuple[int, int] | None) -> dict[str, ApiChange]:
    """The APIs deprecated, and not yet removed, in the target `version`."""
    table = {name: api for name, api in DEPRECATED.items() if at_least(version, api.since)}
    table.update({name: api for name, api in REMOVED.items()
                  if at_least(version, api.since) and not at_least(version, api.removed_in)})
    return table


def deprecated_methods() -> dict[str, str]:
    """Tensor methods of the deprecated and removed functions (TL704 reports a removed one only for
    a target version that still has it)."""
    return {**DEPRECATED_METHODS, **REMOVED_METHODS}


@register
class DeprecatedApi(Rule):
    """## What it does
    Flags uses and imports of deprecated PyTorch functions: the linear-algebra functions
    `torch.linalg` replaces (`torch.qr`, `torch.cholesky`, `torch.chain_matmul`,
    `torch.svd`, `torch.norm`, `torch.lu`, `torch.lu_solve`, `torch.triangular_solve`),
    `torch.ger`, `torch.range`, `nn.UpsamplingNearest2d`/`UpsamplingBilinear2d`,
    `F.upsample*`, `torch.nn.utils.weight_norm`, `torch.testing.assert_allclose`,
    `torch.set_default_tensor_type`, `torch.cuda.memory_cached`, `torch.backends.cuda.sdp_kernel`,
    `torch.utils._pytree._register_pytree_node`, the device-specific mixed-precision
    API (`torch.cuda.amp.autocast`, `GradScaler`, `custom_fwd`, `custom_bwd`,
    `torch.cpu.amp.autocast`) and `functorch` (now `torch.func`) — through any alias or
    import, and as tensor methods on known tensors.  The message names the version that
    deprecated it; nothing is reported for a `target-version` older than that, nor in
    compatibility code: the fallback of a version test or of a failed import
    (`... if TORCH_2_4 else torch.cuda.amp.GradScaler()`), or a default the next statement's
    version test replaces (`weight_norm = nn.utils.weight_norm`, then `if hasattr(
    nn.utils.parametrizations, "weight_norm"): weight_norm = nn.utils.parametrizations.weight_norm`).

    ## Why is this bad
    Deprecated functions warn, are no longer maintained, and are removed in a later
    release; several have subtly different semantics from their replacement.

    ## Example
    ```python
    with torch.cuda.amp.autocast():
        q, r = torch.qr(a)
    ```

    ## Use instead
    ```python
    with torch.amp.autocast("cuda"):
        q, r = torch.linalg.qr(a)
    ```

    ## Fix safety
    Renames to a drop-in replacement (`torch.ger` -> `torch.outer`, `functorch.vmap` ->
    `torch.func.vmap`) and exact rewrites (`torch.qr(a, some=False)` ->
    `torch.linalg.qr(a, mode="complete")`, `torch.cuda.amp.autocast()` ->
    `torch.amp.autocast("cuda")`) are safe; `torch.range(a, b)` -> `torch.arange(a, b + 1)`
    is unsafe unless the bounds are integer literals (a float `b` changes the result).
    The import a fix needs is added once, in the file's style.
    """

    code = "TL704"
    name = "deprecated-api"
    severity = "warning"
    fix_safety = "safe"
    fix_only_where_exact = True

    def check(self, analysis: "Analysis") -> Iterator[Finding]:
        version = analysis.torch_version
        for use in api_uses(analysis, deprecated_for(version), deprecated_methods()):
            api = use.api
            plan = replacement_plan(analysis, use)
            removal = f" and is removed in {api.removed_in}" if api.removed_in else ""
            finding = self.finding(
                use.node,
                f"{what_is_used(analysis, use)} is deprecated since PyTorch {api.since}{removal}. Use {advice_for(use, analysis)}.",
                plan.title if plan else None,
            )
            if plan is not None and plan.safety != self.fix_safety:
                finding.fix = FixInfo(plan.title, plan.safety)
            yield finding
