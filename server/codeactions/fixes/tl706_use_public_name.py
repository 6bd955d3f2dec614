"""TL706: use the public name of a non-public alias (renaming the import and its uses)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import finding_span
from torch_lsp.codeactions.planned_edits import plan_offer
from torch_lsp.codeactions.registry import FixOffer, fixer
from torch_lsp.diagnostics.api.replacements import replacement_plan
from torch_lsp.diagnostics.api.tl706_non_public_api import ALIASES
from torch_lsp.diagnostics.api.uses import use_at

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL706")
def use_public_name(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    use = use_at(analysis, ALIASES, finding_span(finding))
    plan = replacement_plan(analysis, use) if use is not None else None
    if plan is None:
        return []
    return [plan_offer(analysis, "TL706", plan)]
