"""TL708: `pretrained=True/False` -> `weights=<enum>/None`; `import torchvision.models as
models` -> `from torchvision import models`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from torch_lsp.codeactions.locate import finding_span, span
from torch_lsp.codeactions.planned_edits import plan_offer
from torch_lsp.codeactions.registry import FixOffer, fixer
from torch_lsp.diagnostics.api.tl708_torchvision_deprecated import torchvision_issues

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding


@fixer("TL708")
def use_weights(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    for issue in torchvision_issues(analysis):
        if span(issue.node) == finding_span(finding) and issue.plan is not None:
            plan = issue.plan
            return [plan_offer(analysis, "TL708", plan)]
    return []
