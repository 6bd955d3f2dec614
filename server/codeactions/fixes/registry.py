"""What a fix is, and which function offers the fixes of each rule code.

A *fixer* is a function `(analysis, finding) -> list[FixOffer]`, registered for one or
more codes with `@fixer("TL301")`.  Offering is cheap (`ast` facts only): it decides
what the fix will do and titles it.  The libcst work happens only when an offer is
built (`FixOffer.build()`), so a client can list actions first and resolve one later.
The first offer is the rule's main fix; later ones are alternatives.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from server.codeactions.fixes.edits import TextEdit

if TYPE_CHECKING:
    from server.analysis import Analysis
    from server.diagnostics.base import Finding

SAFE = "safe"
UNSAFE = "unsafe"


@dataclass(frozen=True)
class Fix:
    """A built fix: minimal edits (character offsets into `analysis.source`), in text order,
    none overlapping or touching another."""

    code: str
    title: str
    safety: str  # "safe" | "unsafe"
    preferred: bool
    edits: tuple[TextEdit, ...]


@dataclass(frozen=True)
class FixOffer:
    """A fix that can be built: its title and safety are known, its edits not yet."""

    code: str
    title: str
    safety: str
    make_edits: Callable[[], "list[TextEdit] | None"]
    preferred: bool = False

    def build(self) -> Fix | None:
        """The fix with its edits, or None when it cannot be made exactly here."""
        edits = self.make_edits()
        if not edits:
            return None
        return Fix(self.code, self.title, self.safety, self.preferred, tuple(edits))


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
    from server.codeactions.fixes.rewrite import build_edits

    safety = safety or rule_safety(finding.code)
    return FixOffer(finding.code, title, safety, lambda: build_edits(analysis, plan), preferred and safety == SAFE)


def importing(analysis: "Analysis", module: str, at) -> str:
    """Title suffix saying that the fix also adds `import module`."""
    from server.codeactions.fixes.imports import needs_import

    return f" (adds `import {module}`)" if needs_import(analysis, module, at) else ""


def rule_safety(code: str) -> str:
    """The fix safety the catalogue gives the rule (`safe` / `unsafe`)."""
    from server.diagnostics import all_rules

    rule = all_rules().get(code)
    return rule.fix_safety if rule is not None and rule.fix_safety in (SAFE, UNSAFE) else UNSAFE
