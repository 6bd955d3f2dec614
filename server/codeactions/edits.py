"""Text edits: the one edit type of fixes, from libcst to the protocol boundary.

A `TextEdit` replaces `text[start:end]` with `new_text`, where `start` and `end` are
absolute *character offsets* (indices into the Python `str` of the document, i.e. code
points).  Offsets make edits trivial to apply, compare and combine; the one position model,
`torch_lsp.text.LineIndex`, converts them to 1-based lines and code-point columns (what the
protocol boundary turns into client columns) or to `ast` positions (1-based line, UTF-8
byte column).

Edits are computed by diffing the old and new text of the region a fix rewrote
(`diff_edits`): lines are aligned on their stripped content, so re-indenting a block
becomes one small insertion per line, and changed lines are narrowed to the characters
that differ.  An edit never starts or ends between the two characters of a `\\r\\n`, and
keeps the form feeds that start a line where they were (libcst drops some of them and
copies others onto the lines below).
"""
from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Iterable

from torch_lsp.text import LINE_BREAK, lines_with_ends


@dataclass(frozen=True)
class TextEdit:
    """Replace `text[start:end]` (character offsets) with `new_text`."""

    start: int
    end: int
    new_text: str


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """`text` with non-overlapping `edits` applied (in any order)."""
    pieces, cursor = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):  # stable: equal offsets keep their order
        if edit.start < cursor:
            raise ValueError(f"overlapping edits at offset {edit.start}; apply them in separate rounds")
        pieces.append(text[cursor:edit.start])
        pieces.append(edit.new_text)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def in_text_order(edits: Iterable[TextEdit]) -> tuple[TextEdit, ...]:
    return tuple(sorted(edits, key=lambda e: (e.start, e.end)))  # stable: equal offsets keep their order


def conflicts(first: Iterable[TextEdit], second: Iterable[TextEdit]) -> bool:
    """Whether two edit lists touch the same text (touching ends count: their order would be ambiguous)."""
    second = list(second)
    return any(max(a.start, b.start) <= min(a.end, b.end) for a in first for b in second)


def diff_edits(old: str, new: str, base: int = 0) -> list[TextEdit]:
    """Small edits that turn `old` into `new`; offsets are shifted by `base`."""
    if old == new:
        return []
    old_lines, new_lines = line_pieces(old), line_pieces(new)
    if "\f" in old:
        # libcst moves form feeds that start lines (onto every line of a block): the new
        # text gets those of the old lines it keeps, and no others.
        new_lines = [_without_leading_form_feeds(line) for line in new_lines]
    head = _common_prefix(old_lines, new_lines)
    tail = _common_prefix(old_lines[head:][::-1], new_lines[head:][::-1])
    old_mid = old_lines[head:len(old_lines) - tail]
    new_mid = new_lines[head:len(new_lines) - tail]
    offset = base + sum(map(len, old_lines[:head]))
    matcher = SequenceMatcher(None, [s.strip() for s in old_mid], [s.strip() for s in new_mid], autojunk=False)
    edits: list[TextEdit] = []
    starts = _running_offsets(old_mid, offset)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                edits += _narrowed(old_mid[i1 + k], _form_feeds_kept(old_mid[i1 + k], new_mid[j1 + k]), starts[i1 + k])
        else:
            edits += _aligned(old_mid[i1:i2], new_mid[j1:j2], starts[i1])
    return merge_touching(edits)


_SIMILAR = 0.6
_MAX_PAIRS = 400


def _aligned(old: list[str], new: list[str], start: int) -> list[TextEdit]:
    """Edits for a block of changed lines: the most similar pair of lines is edited in place and
    the lines around it are aligned the same way (as `difflib.ndiff` does), so that changing one
    line and inserting another next to it are two small edits, not one big one."""
    if not old or not new or len(old) * len(new) > _MAX_PAIRS:
        return _narrowed("".join(old), "".join(new), start)
    best, pair = _SIMILAR, None
    matcher = SequenceMatcher(autojunk=False)
    for j, new_line in enumerate(new):
        matcher.set_seq2(new_line)
        for i, old_line in enumerate(old):
            matcher.set_seq1(old_line)
            if matcher.real_quick_ratio() > best and matcher.quick_ratio() > best and matcher.ratio() > best:
                best, pair = matcher.ratio(), (i, j)
    if pair is None:
        return _narrowed("".join(old), "".join(new), start)
    i, j = pair
    middle = start + sum(map(len, old[:i]))
    return (
        _aligned(old[:i], new[:j], start)
        + _narrowed(old[i], _form_feeds_kept(old[i], new[j]), middle)
        + _aligned(old[i + 1:], new[j + 1:], middle + len(old[i]))
    )


def _form_feeds_kept(old_line: str, new_line: str) -> str:
    """`new_line` (the new text of `old_line`, its form feeds taken out) with the form feeds
    that started `old_line`.  A form feed in indentation resets the column count, so they
    may go before any indentation."""
    return "\f" * _leading_form_feeds(old_line) + new_line


def _leading_form_feeds(line: str) -> int:
    return line[: len(line) - len(line.lstrip(" \t\f"))].count("\f")


def _without_leading_form_feeds(line: str) -> str:
    indent = len(line) - len(line.lstrip(" \t\f"))
    return line[:indent].replace("\f", "") + line[indent:]


def without_leading_form_feeds(text: str) -> str:
    """`text` with the form feeds in the indentation of its lines taken out."""
    return "".join(_without_leading_form_feeds(line) for line in line_pieces(text)) if "\f" in text else text


def merge_touching(edits: list[TextEdit]) -> list[TextEdit]:
    """Join edits (given in text order) that touch, so that no two insertions share an offset
    and the order of their texts cannot be lost."""
    merged: list[TextEdit] = []
    for edit in edits:
        if merged and edit.start <= merged[-1].end:
            last = merged[-1]
            merged[-1] = TextEdit(last.start, max(last.end, edit.end), last.new_text + edit.new_text)
        else:
            merged.append(edit)
    return merged


def line_pieces(text: str) -> list[str]:
    """Lines with their terminators (LSP line breaks only: `\\n`, `\\r\\n`, `\\r`)."""
    return lines_with_ends(text)


def _common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _running_offsets(lines: list[str], start: int) -> list[int]:
    offsets = [start]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


def _narrowed(old: str, new: str, start: int) -> list[TextEdit]:
    """One edit for `old` -> `new`, trimmed to the words that differ (an edit never cuts a name
    in two, nor a `\r\n`)."""
    if old == new:
        return []
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    while 0 < prefix and _is_word(old[prefix - 1]) and (_is_word_at(old, prefix) or _is_word_at(new, prefix)):
        prefix -= 1
    if 0 < prefix < len(old) and old[prefix - 1] == "\r" and old[prefix] == "\n":
        prefix -= 1
    suffix = 0
    while suffix < limit - prefix and old[len(old) - 1 - suffix] == new[len(new) - 1 - suffix]:
        suffix += 1
    while 0 < suffix and _is_word(old[len(old) - suffix]) and (
        _is_word_at(old, len(old) - suffix - 1) or _is_word_at(new, len(new) - suffix - 1)
    ):
        suffix -= 1
    end = len(old) - suffix
    if 0 < end < len(old) and old[end - 1] == "\r" and old[end] == "\n":
        suffix -= 1
    return [TextEdit(start + prefix, start + len(old) - suffix, new[prefix:len(new) - suffix])]


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def _is_word_at(text: str, index: int) -> bool:
    return 0 <= index < len(text) and _is_word(text[index])

