"""TL702: `x.require_grad = ...` -> `x.requires_grad = ...`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import finding_span, span
from torch_lsp.codeactions.planned_edits import plan_offer
from torch_lsp.codeactions.registry import FixOffer, fixer
from torch_lsp.diagnostics.api.replacements import Plan
from torch_lsp.diagnostics.api.tl702_require_grad_typo import TYPO, typo_targets

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL702")
def rename_requires_grad(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    for target in typo_targets(analysis):
        if span(target) == finding_span(finding):
            name_at = (target.end_lineno, target.end_col_offset - len(TYPO), target.end_lineno, target.end_col_offset)
            plan = Plan("Rename to `requires_grad`", edits=[(name_at, "requires_grad")])
            return [plan_offer(analysis, "TL702", plan)]
    return []
