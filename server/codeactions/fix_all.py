"""Every fix of a file at once: what `torch-lsp check --fix` and `source.fixAll.torch-lsp` apply.

Each round checks the text, builds the main fix of every finding that has one
(safe fixes only, unless `unsafe`), applies those whose edits do not touch each other
(a fix identical to one already taken counts as fixing its finding too), and checks
again; the fixes left out because they overlapped get their turn in the next round.
Rounds stop when nothing changes (at most `MAX_ROUNDS`).  A file with a syntax error
is left alone.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from torch_lsp.codeactions.edits import TextEdit, apply_edits, conflicts, diff_edits
from torch_lsp.codeactions.registry import main_fix

if TYPE_CHECKING:
    from torch_lsp.checker import CheckResult
    from torch_lsp.diagnostics.base import Finding
    from torch_lsp.settings import Settings

MAX_ROUNDS = 6
log = logging.getLogger(__name__)


@dataclass
class FixAllResult:
    original: str
    source: str  # the text with every applicable fix applied
    remaining: "CheckResult"  # the check of `source`
    fixed: list["Finding"] = field(default_factory=list)  # as reported in the round that fixed them

    @property
    def changed(self) -> bool:
        return self.source != self.original

    def edits(self) -> list[TextEdit]:
        """Minimal edits from the original text to the fixed one (for one workspace edit)."""
        return diff_edits(self.original, self.source)


def fix_all(source: str, path: str | None = None, settings: "Settings | None" = None,
            unsafe: bool = False) -> FixAllResult:
    from torch_lsp.checker import SYNTAX_ERROR_CODE, check_source

    check = check_source(source, path, settings)
    result = FixAllResult(source, source, check)
    if any(f.code == SYNTAX_ERROR_CODE for f in check.findings):
        return result
    for _ in range(MAX_ROUNDS):
        fixed, edits = _one_round(check, unsafe)
        if not edits:
            break
        text = apply_edits(result.source, edits)
        recheck = check_source(text, path, settings)
        if any(f.code == SYNTAX_ERROR_CODE for f in recheck.findings):
            log.error("Fixes in %s produced code that does not parse; they were not applied.", check.analysis.path)
            break
        result.source, result.remaining, check = text, recheck, recheck
        result.fixed += fixed
    return result


def _one_round(check: "CheckResult", unsafe: bool) -> tuple[list["Finding"], list[TextEdit]]:
    taken: list[tuple[TextEdit, ...]] = []
    fixed: list["Finding"] = []
    for finding in check.findings:
        fix = main_fix(check.analysis, finding, unsafe)
        if fix is None:
            continue
        if fix.edits in taken:
            fixed.append(finding)
        elif not any(conflicts(fix.edits, other) for other in taken):
            taken.append(fix.edits)
            fixed.append(finding)
    return fixed, [edit for edits in taken for edit in edits]
