"""Quick fixes: from a finding to minimal text edits that repair it.

The API the front ends use (no LSP types here):

- `fix_offers(analysis, finding) -> list[FixOffer]`: the fixes for one finding, cheap
  (`ast` facts only): title, safety, `preferred` (the safe main fix).  The first offer is
  the rule's main fix; later ones are alternatives (`.item()` instead of `.detach()`,
  wrapping the loop instead of decorating the function, ...).
- `FixOffer.build() -> Fix | None`: the libcst work; `Fix.edits` are `TextEdit`s in
  character offsets into `analysis.source` (`edits.Positions` and `to_text_changes`
  convert them to 1-based lines and code-point columns, the `TextChange` of
  `server.codeactions`).  None when the fix cannot be made exactly here.
- `fixes_for(analysis, finding) -> list[Fix]`: every offer, built.
- `finding_at(analysis, code, line, col, end_line, end_col)`: the finding recomputed from a
  diagnostic's code and range when a client dropped `Diagnostic.data` (`fix_offers` does
  this by itself for a finding that lacks the data its fixer reads, `DATA_KEYS`).
- `fix_all(source, path, settings, unsafe=False) -> FixAllResult`: every (safe) fix of a
  file, applied in rounds until stable; `.source` is the fixed text, `.edits()` the
  minimal edits from the original, `.fixed` and `.remaining` what was fixed and what is left.

Fixers never raise to the caller: a fixer that fails is logged and offers nothing.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from server.codeactions.fixes.edits import Positions, TextEdit, apply_edits, conflicts, diff_edits, to_text_changes
from server.codeactions.fixes.fix_all import FixAllResult, fix_all
from server.codeactions.fixes.locate import finding_at, finding_span
from server.codeactions.fixes.registry import DATA_KEYS, FIXERS, SAFE, UNSAFE, Fix, FixOffer

if TYPE_CHECKING:
    from server.analysis import Analysis
    from server.diagnostics.base import Finding

log = logging.getLogger(__name__)


def _load_fixers() -> None:
    # Importing the modules registers their fixers.
    from server.codeactions.fixes import (  # noqa: F401
        correctness,
        detach,
        hoist,
        no_grad,
        performance,
        training,
    )


def fixable_codes() -> set[str]:
    if not FIXERS:
        _load_fixers()
    return set(FIXERS)


def fix_offers(analysis: "Analysis", finding: "Finding") -> list[FixOffer]:
    """The fixes offered for `finding` (recomputed from its range when it carries no data)."""
    if finding.code not in fixable_codes() or not analysis.uses_torch:
        return []
    if any(key not in finding.data for key in DATA_KEYS.get(finding.code, ())):
        finding = finding_at(analysis, finding.code, *finding_span(finding)) or finding
    try:
        return FIXERS[finding.code](analysis, finding)
    except Exception:  # noqa: BLE001 - a fixer bug must not take the server down
        log.exception("The %s fixer failed on %s line %d.", finding.code, analysis.path, finding.line)
        return []


def build(offer: FixOffer) -> Fix | None:
    try:
        return offer.build()
    except Exception:  # noqa: BLE001 - a fixer bug must not take the server down
        log.exception("Building the %s fix %r failed.", offer.code, offer.title)
        return None


def fixes_for(analysis: "Analysis", finding: "Finding") -> list[Fix]:
    """Every fix offered for `finding`, built (those that cannot be made are left out)."""
    built = (build(offer) for offer in fix_offers(analysis, finding))
    return [fix for fix in built if fix is not None]


def main_fix(analysis: "Analysis", finding: "Finding", unsafe: bool = False) -> Fix | None:
    """The first fix of `finding` that may be applied without asking: safe ones, and unsafe
    ones too when `unsafe`."""
    for offer in fix_offers(analysis, finding):
        if offer.safety == SAFE or unsafe:
            fix = build(offer)
            if fix is not None:
                return fix
    return None


__all__ = [
    "Fix", "FixAllResult", "FixOffer", "Positions", "SAFE", "TextEdit", "UNSAFE", "apply_edits", "build", "conflicts",
    "diff_edits", "finding_at", "fix_all", "fix_offers", "fixable_codes", "fixes_for", "main_fix",
    "to_text_changes",
]
