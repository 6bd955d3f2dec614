"""Code actions for a finding, built from an `Analysis` in our own terms.

An action is a title plus text changes in `ast`-like positions (1-based lines,
0-based code-point columns).  The language server turns them into LSP edits in the
client's column unit; nothing here imports `lsprotocol` or `pygls`.

For a finding: the rule's fixes (`fixes/`, built with libcst; the first safe one is
preferred), then "Disable TLxxx for this line" (`noqa.disable_for_line`).  For a file:
"Fix all" applies every safe fix at once (`source.fixAll.torch-lsp`).  Fix titles are
cheap to list; their edits are built only when asked for (`build_fix`), so clients with
`codeAction/resolve` pay for libcst only for the action the user picks.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from server.codeactions.edits import Positions, TextEdit, apply_edits, conflicts, diff_edits, to_text_changes
from server.codeactions.fix_all import FixAllResult, fix_all
from server.codeactions.locate import finding_at
from server.codeactions.registry import (
    SAFE, UNSAFE, Fix, FixOffer, build, fix_offers, fixable_codes, fixes_for, main_fix,
)

if TYPE_CHECKING:
    from server.analysis import Analysis

QUICKFIX = "quickfix"
FIX_ALL = "source.fixAll.torch-lsp"
FIX_ALL_TITLE = "Fix all auto-fixable torch-lsp problems"


@dataclass(frozen=True)
class TextChange:
    """Replace the text between two positions (1-based lines, 0-based code-point columns)."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int
    new_text: str


@dataclass(frozen=True)
class Action:
    title: str
    kind: str
    changes: tuple[TextChange, ...]
    code: str  # the rule code of the finding this action answers
    preferred: bool = False


@dataclass(frozen=True)
class FixChoice:
    """A fix that can be offered before its edits exist (they are built on demand)."""

    title: str
    code: str
    safety: str
    preferred: bool
    span: tuple[int, int, int, int]  # the finding's ast range: line, byte col, end line, end byte col


def fix_choices(analysis: "Analysis", findings, code: str, span: tuple[int, int, int, int]) -> list[FixChoice]:
    """The fixes of the finding with `code` at `span` (recomputed when the cache has none there)."""
    finding = _finding(analysis, findings, code, span)
    if finding is None:
        return []
    return [FixChoice(o.title, o.code, o.safety, o.preferred, span) for o in fix_offers(analysis, finding)]


def build_fix(analysis: "Analysis", findings, choice: FixChoice) -> Action | None:
    """The edits of a fix chosen from `fix_choices` (None when it cannot be made here)."""
    finding = _finding(analysis, findings, choice.code, choice.span)
    if finding is None:
        return None
    for offer in fix_offers(analysis, finding):
        if offer.title == choice.title:
            fix = build(offer)
            if fix is None:
                return None
            changes = to_text_changes(analysis.source, fix.edits)
            return Action(fix.title, QUICKFIX, changes, fix.code, fix.preferred)
    return None


def fix_all_action(source: str, path: str | None, settings) -> Action | None:
    """Every safe fix of the file in one action, or None when there is nothing to fix."""
    result = fix_all(source, path, settings)
    if not result.changed:
        return None
    return Action(FIX_ALL_TITLE, FIX_ALL, to_text_changes(source, result.edits()), code="")


def _finding(analysis: "Analysis", findings, code: str, span: tuple[int, int, int, int]):
    """The cached finding at `span`, else one recomputed from the range (a client dropped `data`)."""
    line, col = span[0], span[1]
    for finding in findings or ():
        if finding.code == code and finding.line == line and finding.col == col:
            return finding
    return finding_at(analysis, code, *span)


def actions_for(analysis: "Analysis", code: str, line: int) -> list[Action]:
    """Every action offered for a finding with `code` reported on 1-based `line`."""
    # Imported here: the action modules build `Action`s defined above.
    from server.codeactions.noqa import disable_for_line

    actions = [disable_for_line(analysis, code, line)]
    return [action for action in actions if action is not None]


__all__ = [
    "FIX_ALL", "FIX_ALL_TITLE", "QUICKFIX", "SAFE", "UNSAFE", "Action", "Fix", "FixAllResult", "FixChoice", "FixOffer",
    "Positions", "TextChange", "TextEdit", "actions_for", "apply_edits", "build", "build_fix", "conflicts",
    "diff_edits", "finding_at", "fix_all", "fix_all_action", "fix_choices", "fix_offers", "fixable_codes",
    "fixes_for", "main_fix", "to_text_changes",
]
