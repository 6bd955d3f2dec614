"""TL704: use the replacement of a deprecated API (a drop-in rename, or an exact rewrite such
as `torch.qr(a, some=False)` -> `torch.linalg.qr(a, mode="complete")`)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import finding_span
from torch_lsp.codeactions.planned_edits import plan_offer
from torch_lsp.codeactions.registry import FixOffer, fixer
from torch_lsp.diagnostics.api.replacements import replacement_plan
from torch_lsp.diagnostics.api.tl704_deprecated_api import deprecated_for, deprecated_methods
from torch_lsp.diagnostics.api.uses import use_at

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL704")
def use_replacement(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    version = analysis.torch_version
    use = use_at(analysis, deprecated_for(version), finding_span(finding), deprecated_methods())
    plan = replacement_plan(analysis, use) if use is not None else None
    if plan is None:
        return []
    return [plan_offer(analysis, "TL704", plan)]
