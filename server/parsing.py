"""Parse Python source with `ast`, recovering from the syntax errors of half-typed code.

On a `SyntaxError` the offending line is blanked with same-length text (`pass` at
its indent, `if 1:` when it heads an indented block, or plain spaces for an
unexpected indent) and the source is parsed again, a few times at most.  Columns
elsewhere stay valid, so the rest of the file keeps its diagnostics.
"""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass

from torch_lsp.text import split_keeping_breaks, split_lines

MAX_RECOVERY_ATTEMPTS = 12
_HEADER_REF = re.compile(r"on line (\d+)")


@dataclass(frozen=True)
class SyntaxIssue:
    message: str
    line: int  # 1-based
    col: int  # 0-based UTF-8 byte column
    end_col: int


def parse_source(source: str) -> tuple[ast.Module, list[SyntaxIssue]]:
    """The best tree for `source` and the syntax errors met on the way."""
    issues: list[SyntaxIssue] = []
    text = source.replace("\x00", " ")
    for _ in range(MAX_RECOVERY_ATTEMPTS):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escape sequences etc.
                return ast.parse(text, type_comments=False), issues
        except SyntaxError as error:
            line = error.lineno or 1
            issue = _issue_from(error, text)
            if not issues or issues[-1].line != issue.line or not issues:
                issues.append(issue)
            patched = _blank_line(text, line, error)
            if patched == text:
                break
            text = patched
        except (ValueError, RecursionError, MemoryError) as error:
            issues.append(SyntaxIssue(f"cannot parse this file: {error}", 1, 0, 0))
            break
    return ast.Module(body=[], type_ignores=[]), issues or [SyntaxIssue("cannot parse this file", 1, 0, 0)]


def _issue_from(error: SyntaxError, text: str) -> SyntaxIssue:
    lines = split_lines(text)
    line = min(max(error.lineno or 1, 1), len(lines))
    raw = lines[line - 1]
    # SyntaxError.offset counts characters (1-based) in the line.
    char_col = max((error.offset or 1) - 1, 0)
    char_col = min(char_col, len(raw))
    col = len(raw[:char_col].encode("utf-8"))
    end_col = len(raw.rstrip().encode("utf-8"))
    if end_col <= col:
        end_col = col + 1 if col < len(raw.encode("utf-8")) else col
    message = error.msg or "invalid syntax"
    message = message[0].upper() + message[1:]
    return SyntaxIssue(f"Syntax error: {message}.", line, col, end_col)


def _blank_line(text: str, line: int, error: SyntaxError) -> str:
    """`text` with the line at fault replaced by same-length harmless code."""
    message = error.msg or ""
    if message.startswith("expected an indented block"):
        header = _HEADER_REF.search(message)
        if header:
            line = int(header.group(1))
    pieces = split_keeping_breaks(text)  # line, break, line, ...
    index = 2 * (line - 1)
    if index >= len(pieces):
        index = len(pieces) - 1 if len(pieces) % 2 else len(pieces) - 2
    original = pieces[index]
    indent = original[: len(original) - len(original.lstrip())]
    width = len(original) - len(indent)
    if message.startswith("unexpected indent") or message.startswith("unindent"):
        replacement = " " * len(original)
    elif _heads_block(pieces, index, indent):
        replacement = indent + "if 1:".ljust(width)
    else:
        replacement = indent + "pass".ljust(width)
    if replacement == original:
        replacement = " " * len(original)
    if replacement == original:
        return text
    pieces[index] = replacement
    return "".join(pieces)


def _heads_block(pieces: list[str], index: int, indent: str) -> bool:
    """True when the next non-blank line is indented deeper than this one."""
    for later in pieces[index + 2 :: 2]:
        if later.strip() and not later.lstrip().startswith("#"):
            return len(later) - len(later.lstrip()) > len(indent)
    return False
