"""TL707: use `torch.log1p`, `torch.expm1`, `torch.logsumexp` or `torch.rsqrt`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import finding_span, span
from torch_lsp.codeactions.planned_edits import plan_offer
from torch_lsp.codeactions.registry import FixOffer, fixer
from torch_lsp.diagnostics.api.tl707_numerics import numeric_rewrites

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL707")
def use_dedicated_function(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    for rewrite in numeric_rewrites(analysis):
        if span(rewrite.node) == finding_span(finding) and rewrite.plan is not None:
            plan = rewrite.plan
            return [plan_offer(analysis, "TL707", plan)]
    return []
