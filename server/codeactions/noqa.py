""""Disable TLxxx for this line": the `# noqa` comment edit.

Findings are silenced by a `# noqa` comment on the line they are reported on (see
`torch_lsp.diagnostics.noqa_codes`), so the action edits exactly that line:
- no `# noqa` yet: append `  # noqa: TL301` after the code (trailing blanks dropped);
- `# noqa: TL101`: extend it to `# noqa: TL101, TL301`;
- the code is already listed, or a bare `# noqa` silences everything: no action.

A comment cannot go where it would change the program: after a backslash
continuation, or at the end of a line that is inside a multi-line string.
"""
from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from torch_lsp.codeactions.action import QUICKFIX, Action
from torch_lsp.codeactions.edits import TextEdit
from torch_lsp.diagnostics import noqa_codes, noqa_match

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis


def disable_for_line(analysis: "Analysis", code: str, line: int) -> Action | None:
    """The action that silences `code` on 1-based `line`, or None when none applies."""
    if not 1 <= line <= len(analysis.lines.lines):
        return None
    text = analysis.lines.line_text(line)
    if text.rstrip().endswith("\\") or _line_ends_inside_string(analysis.tree, line):
        return None
    edit = _noqa_edit(text, analysis.lines.line_start(line), code)
    if edit is None:
        return None
    return Action(title=f"Disable {code} for this line", kind=QUICKFIX, edits=(edit,), code=code)


def _noqa_edit(text: str, line_start: int, code: str) -> TextEdit | None:
    """The edit of the line `text`, which starts at offset `line_start`."""
    listed = noqa_codes(text)
    if listed is None:
        code_end = len(text.rstrip())
        return TextEdit(line_start + code_end, line_start + len(text), f"  # noqa: {code}")
    if not listed or code in listed:
        return None  # a bare `# noqa` already silences everything
    codes_end = noqa_match(text).end("codes")
    return TextEdit(line_start + codes_end, line_start + codes_end, f", {code}")


def _line_ends_inside_string(tree: ast.Module, line: int) -> bool:
    """Whether a string literal (or f-string) spans the end of 1-based `line`."""
    for statement in tree.body:
        if not statement.lineno <= line <= (statement.end_lineno or statement.lineno):
            continue
        for node in ast.walk(statement):
            if _is_string(node) and node.lineno <= line < (node.end_lineno or node.lineno):
                return True
    return False


def _is_string(node: ast.AST) -> bool:
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))
