"""Lines and columns, converted in one place.

`ast` reports columns as UTF-8 byte offsets into a line.  LSP clients count in the
negotiated unit (UTF-16 code units for VS Code, UTF-8 bytes for recent Neovim,
code points for UTF-32), and the CLI reports 1-based code-point columns like ruff.
Lines are split the LSP way — only on `\\n`, `\\r\\n` and `\\r` — never with
`str.splitlines()`, which also breaks on U+2028, form feed and friends and would
make every position after such a character drift.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property

# The one definition of an LSP line break; every line split in the package uses it.
LINE_BREAK = re.compile(r"\r\n|\r|\n")
_LINE_BREAK_KEPT = re.compile(f"({LINE_BREAK.pattern})")

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT_CHARACTER = "\ufffd"

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"


def well_formed(text: str) -> str:
    """`text` with each lone surrogate (a client's JSON may carry `"\\ud800"`; it has no
    UTF-8 form, so neither `ast` nor a column conversion could read the text) replaced by
    U+FFFD, which counts the same in every column unit: one code point, one UTF-16 unit."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(REPLACEMENT_CHARACTER, text)
    return text


def split_lines(source: str) -> list[str]:
    """Lines without their terminators, split only where LSP and Python split."""
    return LINE_BREAK.split(source)


def split_keeping_breaks(source: str) -> list[str]:
    """Lines and their terminators in turn: line, break, line, ..., last line."""
    return _LINE_BREAK_KEPT.split(source)


def lines_with_ends(source: str) -> list[str]:
    """Lines with their terminators; the last line only when it is not empty."""
    pieces = split_keeping_breaks(source)
    lines = [pieces[index] + pieces[index + 1] for index in range(0, len(pieces) - 1, 2)]
    if pieces[-1]:
        lines.append(pieces[-1])
    return lines


@dataclass
class LineIndex:
    """Maps between `ast` positions (1-based line, UTF-8 byte column) and the units
    that clients speak.  Built once per document version."""

    source: str
    lines: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.lines = split_lines(self.source)

    @cached_property
    def line_starts(self) -> list[int]:
        """Character offset in `source` where each line starts (0-based line index)."""
        return [0] + [match.end() for match in LINE_BREAK.finditer(self.source)]

    # -- character offsets into `source` (what code-action edits carry) -----------
    def line_start(self, line: int) -> int:
        """Offset where 1-based `line` starts (the end of the text past the last line)."""
        if line < 1:
            return 0
        starts = self.line_starts
        return starts[line - 1] if line <= len(starts) else len(self.source)

    def position(self, offset: int) -> tuple[int, int]:
        """(1-based line, code-point column) of an offset."""
        offset = max(0, min(offset, len(self.source)))
        index = bisect.bisect_right(self.line_starts, offset) - 1
        return index + 1, offset - self.line_starts[index]

    def offset(self, line: int, column: int) -> int:
        """Offset of a 1-based line and code-point column."""
        return min(self.line_start(line) + column, len(self.source))

    def offset_of_ast(self, line: int, byte_col: int) -> int:
        """Offset of an `ast` position (1-based line, UTF-8 byte column)."""
        return self.offset(line, self.char_column(line, byte_col))

    def ast_position(self, offset: int) -> tuple[int, int]:
        """(1-based line, UTF-8 byte column) of an offset, as `ast` reports positions."""
        line, column = self.position(offset)
        return line, len(self.line_text(line)[:column].encode("utf-8"))

    def line_text(self, line: int) -> str:
        """Text of a 1-based line, or "" past the end."""
        if 1 <= line <= len(self.lines):
            return self.lines[line - 1]
        return ""

    # -- ast (UTF-8 bytes) -> other units -------------------------------------
    def char_column(self, line: int, byte_col: int) -> int:
        """Code-point column (0-based) of a UTF-8 byte column on a 1-based line."""
        text = self.line_text(line)
        if text.isascii():
            return min(byte_col, len(text))
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def client_column(self, line: int, byte_col: int, encoding: str) -> int:
        """Column in the client's unit for a UTF-8 byte column on a 1-based line."""
        text = self.line_text(line)
        if text.isascii() or encoding == UTF8:
            return min(byte_col, len(text.encode("utf-8")))
        prefix = text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")
        if encoding == UTF32:
            return len(prefix)
        return len(prefix.encode("utf-16-le")) // 2

    # -- client units -> code points -------------------------------------------
    def clamp_line(self, line0: int) -> int:
        """A 0-based line clamped into the document (clients send 2**31-1)."""
        return max(0, min(line0, len(self.lines) - 1))

    def char_from_client(self, line0: int, column: int, encoding: str) -> int:
        """Code-point column for a client column, clamped to the line's end."""
        text = self.lines[self.clamp_line(line0)]
        column = max(0, column)
        if text.isascii():
            return min(column, len(text))
        if encoding == UTF32:
            return min(column, len(text))
        units = 0
        for index, ch in enumerate(text):
            width = len(ch.encode("utf-8")) if encoding == UTF8 else (2 if ord(ch) > 0xFFFF else 1)
            if units + width > column:
                return index
            units += width
        return len(text)

    def byte_from_client(self, line0: int, column: int, encoding: str) -> int:
        """UTF-8 byte column (what `ast` uses) for a client column."""
        text = self.lines[self.clamp_line(line0)]
        chars = self.char_from_client(line0, column, encoding)
        return len(text[:chars].encode("utf-8"))

    def offset_from_client(self, line0: int, column: int, encoding: str) -> int:
        """Character offset in `source` of a client position: 0 before the first line,
        the end of the text past the last line, clamped to the end of its line."""
        if line0 < 0:
            return 0
        if line0 >= len(self.lines):
            return len(self.source)
        return self.line_starts[line0] + self.char_from_client(line0, column, encoding)

    def client_column_from_char(self, line0: int, char_col: int, encoding: str) -> int:
        """Client column of a code-point column on a 0-based line."""
        text = self.lines[self.clamp_line(line0)]
        prefix = text[: max(0, char_col)]
        if encoding == UTF32 or prefix.isascii():
            return len(prefix)
        if encoding == UTF8:
            return len(prefix.encode("utf-8"))
        return len(prefix.encode("utf-16-le")) // 2

    def end_position(self) -> tuple[int, int]:
        """(1-based line, byte column) just after the last character."""
        last = len(self.lines)
        return last, len(self.lines[-1].encode("utf-8"))
