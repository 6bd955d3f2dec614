"""Code actions for a finding, built from an `Analysis` in our own terms.

An action is a title plus text changes in `ast`-like positions (1-based lines,
0-based code-point columns).  The language server turns them into LSP edits in the
client's column unit; nothing here imports `lsprotocol` or `pygls`.

Today there is one action per finding, "Disable TLxxx for this line"
(`noqa.disable_for_line`).  The rule fixes of later issues join `actions_for`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from server.analysis import Analysis

QUICKFIX = "quickfix"


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


def actions_for(analysis: "Analysis", code: str, line: int) -> list[Action]:
    """Every action offered for a finding with `code` reported on 1-based `line`."""
    # Imported here: the action modules build `Action`s defined above.
    from server.codeactions.noqa import disable_for_line

    actions = [disable_for_line(analysis, code, line)]
    return [action for action in actions if action is not None]


__all__ = ["QUICKFIX", "Action", "TextChange", "actions_for"]
