"""What a fix is, which function offers the fixes of each rule code, and asking it.

A *fixer* is a function `(analysis, finding) -> list[FixOffer]`, registered for one or
more codes with `@fixer("TL301")` in `fixes/tlNNN_<what_it_does>.py`.  Offering is cheap
(`ast` facts only): it decides what the fix will do and titles it.  The libcst work
happens only when an offer is built (`FixOffer.build()`), so a client can list actions
first and resolve one later.  The first offer is the rule's main fix; later ones are
alternatives.

Fixers never raise to the caller: a fixer that fails is logged and offers nothing.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from torch_lsp.codeactions.action import QUICKFIX, Action
from torch_lsp.codeactions.edits import TextEdit, in_text_order
from torch_lsp.codeactions.locate import finding_at, finding_span

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.diagnostics.base import Finding

SAFE = "safe"
UNSAFE = "unsafe"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FixOffer:
    """A fix offered for one finding: its title, safety and whether it is the preferred one
    are known at once; its edits are built (the libcst work) only by `build()`."""

    code: str
    title: str
    safety: str
    make_edits: Callable[[], "list[TextEdit] | None"]
    preferred: bool = False

    def build(self) -> Action | None:
        """The fix as a quick-fix action with its edits, or None when it cannot be made exactly here."""
        edits = self.make_edits()
        if not edits:
            return None
        return Action(self.title, QUICKFIX, in_text_order(edits), self.code, self.preferred)


Fixer = Callable[["Analysis", "Finding"], "list[FixOffer]"]
FIXERS: dict[str, Fixer] = {}
# The `Finding.data` keys each code's fixer reads: a finding that lacks them (a client dropped
# `Diagnostic.data`) is recomputed from its range first.
DATA_KEYS: dict[str, tuple[str, ...]] = {}


def fixer(*codes: str, data: tuple[str, ...] = ()) -> Callable[[Fixer], Fixer]:
    def register(function: Fixer) -> Fixer:
        for code in codes:
            if code in FIXERS:
                raise ValueError(f"two fixers registered for {code}")
            FIXERS[code] = function
            DATA_KEYS[code] = data
        return function

    return register


def offer(analysis: "Analysis", finding: "Finding", title: str, plan: Callable, safety: str | None = None,
          preferred: bool = True) -> FixOffer:
    """An offer whose edits come from running `plan(rewrite)` when it is built.  Only a safe
    main fix is marked preferred."""
    from torch_lsp.codeactions.rewrite import build_edits

    safety = safety or rule_safety(finding.code)
    return FixOffer(finding.code, title, safety, lambda: build_edits(analysis, plan), preferred and safety == SAFE)


def importing(analysis: "Analysis", module: str, at) -> str:
    """Title suffix saying that the fix also adds `import module`."""
    from torch_lsp.codeactions.imports import needs_import

    return f" (adds `import {module}`)" if needs_import(analysis, module, at) else ""


def rule_safety(code: str) -> str:
    """The fix safety the catalogue gives the rule (`safe` / `unsafe`)."""
    from torch_lsp.diagnostics import all_rules

    rule = all_rules().get(code)
    return rule.fix_safety if rule is not None and rule.fix_safety in (SAFE, UNSAFE) else UNSAFE


# ------------------------------------------------------------ the fixes of a finding
def fixable_codes() -> set[str]:
    if not FIXERS:
        # Importing the package imports every `fixes/tlNNN_*.py`, which registers its fixer.
        import torch_lsp.codeactions.fixes  # noqa: F401
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


def build(offer: FixOffer) -> Action | None:
    try:
        return offer.build()
    except Exception:  # noqa: BLE001 - a fixer bug must not take the server down
        log.exception("Building the %s fix %r failed.", offer.code, offer.title)
        return None


def fixes_for(analysis: "Analysis", finding: "Finding") -> list[Action]:
    """Every fix offered for `finding`, built (those that cannot be made are left out)."""
    built = (build(offer) for offer in fix_offers(analysis, finding))
    return [fix for fix in built if fix is not None]


def main_fix(analysis: "Analysis", finding: "Finding", unsafe: bool = False) -> Action | None:
    """The first fix of `finding` that may be applied without asking: safe ones, and unsafe
    ones too when `unsafe`."""
    for offer in fix_offers(analysis, finding):
        if offer.safety == SAFE or unsafe:
            fix = build(offer)
            if fix is not None:
                return fix
    return None
