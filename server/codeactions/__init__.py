"""Code actions for a finding, built from an `Analysis` in our own terms.

For a finding: the rule's fixes (the first safe one is preferred), then "Disable TLxxx
for this line" (`noqa.disable_for_line`).  For a file: "Fix all" applies every safe fix
at once (`source.fixAll.torch-lsp`, `fix_all`).  Fix titles are cheap to list; their
edits are built only when asked for (`build_fix`), so clients with `codeAction/resolve`
pay for libcst only for the action the user picks.  Nothing here imports `lsprotocol`
or `pygls`: the language server converts `Action`s to LSP code actions.

Where things are:
- `fixes/tlNNN_<what_it_does>.py`: the fix of rule TLNNN, one module per rule code that
  has one (`ls server/codeactions/fixes/tl302*`); a new fix goes there.
- `registry.py`: `FixOffer`, the `@fixer` registry, and the fixes of a finding
  (`fix_offers`, `build`, `main_fix`); `fix_all.py`: every fix of a file, in rounds.
- `locate.py` (from a finding's range to the `ast` nodes), `rewrite.py` + `concrete.py`
  (the change as libcst nodes, rendered and diffed), `calls.py`, `imports.py`,
  `names.py`, `softmax_dim.py`: what the fixes share.
- `edits.py` (`TextEdit`), `action.py` (`Action`), `noqa.py`.

The types, from a finding to the client:
- `FixInfo` (in `torch_lsp.diagnostics.base`): the fix a rule promises on a finding, its
  title and safety, reported with the finding before any fix is built.
- `FixOffer`: a fix offered for one finding, listed cheaply; its edits are built by `build()`.
- `Action`: a code action with its edits built (a rule's fix, the `# noqa` edit, fix-all).
- `TextEdit`: replace `text[start:end]` (character offsets) with new text; the one edit
  type from libcst to the protocol boundary, where `torch_lsp.text.LineIndex` turns offsets into lines
  and columns.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from torch_lsp.codeactions.action import FIX_ALL, FIX_ALL_TITLE, QUICKFIX, Action
from torch_lsp.codeactions.edits import TextEdit, apply_edits, conflicts, diff_edits, in_text_order
from torch_lsp.codeactions.fix_all import FixAllResult, fix_all
from torch_lsp.codeactions.locate import finding_at
from torch_lsp.codeactions.noqa import disable_for_line
from torch_lsp.codeactions.registry import SAFE, UNSAFE, FixOffer, build, fix_offers, fixable_codes, fixes_for, main_fix
from torch_lsp.parsing import parses

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

log = logging.getLogger(__name__)
Span = tuple[int, int, int, int]  # a finding's ast range: line, byte col, end line, end byte col


def fix_offers_at(analysis: "Analysis", findings, code: str, span: Span) -> list[FixOffer]:
    """The fixes of the finding with `code` at `span` (recomputed when the cache has none there)."""
    finding = _finding(analysis, findings, code, span)
    if finding is None:
        return []
    return fix_offers(analysis, finding)


def build_fix(analysis: "Analysis", findings, code: str, span: Span, title: str) -> Action | None:
    """The fix titled `title` of the finding with `code` at `span`, built (None when it cannot
    be made here).  Takes plain values: a client hands them back to resolve an action."""
    finding = _finding(analysis, findings, code, span)
    if finding is None:
        return None
    for offer in fix_offers(analysis, finding):
        if offer.title == title:
            return _if_it_parses(analysis, build(offer))
    return None


def fix_all_action(source: str, path: str | None, settings) -> Action | None:
    """Every safe fix of the file in one action, or None when there is nothing to fix."""
    result = fix_all(source, path, settings)
    if not result.changed:
        return None
    return Action(FIX_ALL_TITLE, FIX_ALL, in_text_order(result.edits()), code="")


def _finding(analysis: "Analysis", findings, code: str, span: Span):
    """The cached finding at `span`, else one recomputed from the range (a client dropped `data`)."""
    line, col = span[0], span[1]
    for finding in findings or ():
        if finding.code == code and finding.line == line and finding.col == col:
            return finding
    return finding_at(analysis, code, *span)


def actions_for(analysis: "Analysis", code: str, line: int) -> list[Action]:
    """Every action offered for a finding with `code` reported on 1-based `line`."""
    actions = [_if_it_parses(analysis, disable_for_line(analysis, code, line))]
    return [action for action in actions if action is not None]


def _if_it_parses(analysis: "Analysis", action: Action | None) -> Action | None:
    """`action`, unless the file parsed before it and would not after it: the check
    `fix_all` makes after each round, made for each single action too (a fix checks
    only the statements it rewrote)."""
    if action is None or analysis.syntax_errors or parses(apply_edits(analysis.source, action.edits)):
        return action
    log.error("The action %r on %s would leave code that does not parse; it is not offered.",
              action.title, analysis.path or "the document")
    return None


__all__ = [
    "FIX_ALL", "FIX_ALL_TITLE", "QUICKFIX", "SAFE", "UNSAFE", "Action", "FixAllResult", "FixOffer",
    "TextEdit", "actions_for", "apply_edits", "build", "build_fix", "conflicts", "diff_edits", "finding_at",
    "fix_all", "fix_all_action", "fix_offers", "fix_offers_at", "fixable_codes", "fixes_for", "main_fix",
]
