"""Parse an edited version by parsing again only the top-level statements the edit touched.

A typed character changes one function, yet `ast.parse` of the whole file costs as
much for it as for opening the file.  When the previous version of the text parsed
without errors, the edit is mapped to the group of top-level statements it falls in
(its *slot*: from the group's first line, decorators included, to the line before the
next group, so the blank and comment lines after it belong to it).  Only the slot's
new text is parsed; the statements before it are the previous tree's own nodes, and
the ones after it too when the edit keeps the number of lines.  When it does not,
everything from the slot on is parsed again: the later statements' line numbers move,
and nodes are never changed in place (the previous version's analysis may still be
read by a request meanwhile).

The result is the tree `ast.parse` gives for the whole new text, or None, and then the
caller parses the whole text (with the recovery of `torch_lsp.parsing`): when the
previous version had syntax errors, the new slot does not parse on its own, the edit
crosses a slot's boundary, or a `from __future__` import could be affected (only
valid at the top of a file).  Blank lines put before the slot's text give its nodes
their line numbers in the file directly; columns are per line and need nothing.
"""
from __future__ import annotations

import ast
from bisect import bisect_right
from dataclasses import dataclass

from torch_lsp.parsing import BYTE_ORDER_MARK, SyntaxIssue, parse_quietly
from torch_lsp.statement_facts import StatementFacts
from torch_lsp.text import LineIndex, well_formed


@dataclass(frozen=True)
class ParsedVersion:
    """A version's text, its line index, the tree and syntax errors `parse_source` gave, and
    the facts about its top-level statements (which a next version sharing them reuses)."""

    source: str
    lines: LineIndex
    tree: ast.Module
    syntax_errors: list[SyntaxIssue]
    statements: StatementFacts | None = None


def reparse_edit(previous: ParsedVersion, source: str) -> ast.Module | None:
    """The tree of `source`, equal to `ast.parse(source)`, built from `previous` by parsing
    only what the edit touched; None when that cannot be done safely (see the module
    docstring): the caller parses the whole text then."""
    old = previous.source
    if previous.syntax_errors or not _plain(source) or not _plain(old):
        return None
    if source == old:
        return previous.tree
    start, old_end, _ = _changed_span(old, source)
    body = previous.tree.body
    slots = _slot_starts(body)  # (first line, index of the first statement), in order
    first_lines = [line for line, _ in slots]
    edit_first_line, _ = previous.lines.position(start)
    edit_last_line, _ = previous.lines.position(old_end)
    slot = bisect_right(first_lines, edit_first_line) - 1
    if slot < 0:
        return None  # before the first statement (a comment header, an encoding line)
    if slot + 1 < len(slots) and edit_last_line >= first_lines[slot + 1]:
        return None  # the edit reaches into the next slot
    if _future_import_at_or_after(body, slots[slot][1]):
        return None
    slot_start = previous.lines.line_start(first_lines[slot])
    lines_moved = _line_breaks(source) - _line_breaks(old)
    keeps_tail = lines_moved == 0 and slot + 1 < len(slots)
    if keeps_tail:
        old_slot_end = previous.lines.line_start(first_lines[slot + 1])
        new_slot_end = old_slot_end + len(source) - len(old)
        end_statement = slots[slot + 1][1]
    else:
        new_slot_end, end_statement = len(source), len(body)
    text = source[slot_start:new_slot_end]
    if "__future__" in text or "__future__" in old[slot_start:old_end] or text.rstrip().endswith("\\"):
        return None  # a continuation line at the slot's end would join the next statement
    try:
        parsed = parse_quietly("\n" * (first_lines[slot] - 1) + text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return ast.Module(body=body[:slots[slot][1]] + parsed.body + body[end_statement:], type_ignores=[])


def _plain(text: str) -> bool:
    """Text that `parse_source` parses as it is (no mark to leave out, no NUL, no lone surrogate)."""
    return not text.startswith(BYTE_ORDER_MARK) and "\x00" not in text and well_formed(text) is text


def _changed_span(old: str, new: str) -> tuple[int, int, int]:
    """(start, end in `old`, end in `new`) of the one span the edit replaced: the texts
    agree before `start` and after the ends."""
    limit = min(len(old), len(new))
    start = _common_prefix(old, new, limit)
    suffix = _common_prefix(old[::-1], new[::-1], limit - start)
    return start, len(old) - suffix, len(new) - suffix


def _common_prefix(a: str, b: str, limit: int) -> int:
    """Length of the longest common prefix of `a` and `b`, at most `limit` (binary search on
    slice comparisons, which run in C)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _slot_starts(body: list[ast.stmt]) -> list[tuple[int, int]]:
    """(first line, statement index) of each group of top-level statements that share no
    line with the group before (`x = 1; y = 2` is one group)."""
    slots: list[tuple[int, int]] = []
    last_line = 0
    for index, statement in enumerate(body):
        first = first_line(statement)
        if first > last_line:
            slots.append((first, index))
        last_line = max(last_line, statement.end_lineno or statement.lineno)
    return slots


def first_line(statement: ast.stmt) -> int:
    """The first line of a top-level statement, its decorators included."""
    return min([statement.lineno] + [d.lineno for d in getattr(statement, "decorator_list", ())])


def _future_import_at_or_after(body: list[ast.stmt], index: int) -> bool:
    """Whether a `from __future__ import` is among the statements from `index` on: those
    must stay first in the file, which parsing a slot alone cannot check."""
    return any(isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
               for statement in body[index:])


def _line_breaks(text: str) -> int:
    """Line breaks in `text`, a `\\r\\n` counting once (as LSP and Python count them).  Counted
    over the whole text: an edit between the two characters of a `\\r\\n` adds a line."""
    return text.count("\n") + text.count("\r") - text.count("\r\n")
