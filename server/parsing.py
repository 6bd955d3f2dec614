"""Parse Python source with `ast`, recovering from the syntax errors of half-typed code.

On a `SyntaxError` the offending line is blanked with same-length text (`pass` at
its indent, `if 1:` when it heads an indented block, or plain spaces for an
unexpected indent) and the source is parsed again, a few times at most.  Columns
elsewhere stay valid, so the rest of the file keeps its diagnostics.  An unindent
that matches no outer level usually follows one line indented too deep: that line is
blanked, so the mistake is reported once, not once per line after it.

The text is parsed as a client holds it: a leading byte-order mark (which `ast` rejects
in a `str`) is left out and the columns of line 1 are given back in UTF-8 bytes of the
line with its mark (`ast` positions are per line: no other line moves); NUL characters
are parsed as spaces, lone surrogates as U+FFFD.
"""
from __future__ import annotations

import ast
import dataclasses
import re
import sys
import warnings
from dataclasses import dataclass

from torch_lsp.text import split_keeping_breaks, split_lines, well_formed

MAX_RECOVERY_ATTEMPTS = 12
BYTE_ORDER_MARK = "\ufeff"
# The mark is left out of what is parsed: columns on line 1 move by its 3 UTF-8 bytes.
_MARK_SHIFT = len(BYTE_ORDER_MARK.encode("utf-8"))
_HEADER_REF = re.compile(r"on line (\d+)")


@dataclass(frozen=True)
class SyntaxIssue:
    message: str
    line: int  # 1-based
    col: int  # 0-based UTF-8 byte column
    end_col: int
    rest_checked: bool = True  # False when nothing of the file could be analysed


def parses(source: str) -> bool:
    """Whether `source` parses without recovery (as `parse_source` reads it)."""
    try:
        parse_quietly(_parseable(source))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def parse_source(source: str) -> tuple[ast.Module, list[SyntaxIssue]]:
    """The best tree for `source` and the syntax errors met on the way."""
    tree, issues = _recover(_parseable(source))
    if source.startswith(BYTE_ORDER_MARK):
        _shift_first_line(tree, issues)
    return tree, issues


def _parseable(source: str) -> str:
    text = well_formed(source).replace("\x00", " ")
    return text[1:] if text.startswith(BYTE_ORDER_MARK) else text


def parse_quietly(text: str) -> ast.Module:
    """`ast.parse` without the warnings some valid code raises (invalid escape sequences)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # invalid escape sequences etc.
        return ast.parse(text, type_comments=False)


def _shift_first_line(tree: ast.Module, issues: list[SyntaxIssue]) -> None:
    """Columns on line 1 as UTF-8 bytes of the line with its byte-order mark."""
    for statement in tree.body:
        if statement.lineno > 1:
            break
        for node in ast.walk(statement):
            if getattr(node, "lineno", None) == 1:
                node.col_offset += _MARK_SHIFT
            if getattr(node, "end_lineno", None) == 1:
                node.end_col_offset += _MARK_SHIFT
    issues[:] = [SyntaxIssue(i.message, 1, i.col + _MARK_SHIFT, i.end_col + _MARK_SHIFT) if i.line == 1 else i
                 for i in issues]


def _recover(text: str) -> tuple[ast.Module, list[SyntaxIssue]]:
    issues: list[SyntaxIssue] = []
    for _ in range(MAX_RECOVERY_ATTEMPTS):
        try:
            return parse_quietly(text), issues
        except SyntaxError as error:
            issue = _issue_from(error, text)
            if not issues or issues[-1].line != issue.line:
                issues.append(issue)
            patched = _blank_line(text, error.lineno or 1, error.msg or "")
        except (RecursionError, MemoryError):
            # No line number: CPython's parser nests one level per operand of a long
            # expression.  The longest line is the likely one; it is left out.
            line = _longest_line(text)
            width = len(split_lines(text)[line - 1])
            issues.append(SyntaxIssue(
                f"This line is nested too deeply for Python's parser ({width:,} characters); it is not checked.",
                line, 0, len(split_lines(text)[line - 1].encode("utf-8"))))
            patched = _blank_line(text, line, "")
        except ValueError as error:
            issues.append(SyntaxIssue(f"Cannot parse this file: {error}.", 1, 0, 0))
            break
        if patched == text:
            break
        text = patched
    # Nothing could be recovered: say what went wrong first, and that nothing was checked.
    first = issues[0] if issues else SyntaxIssue("Cannot parse this file.", 1, 0, 0)
    return ast.Module(body=[], type_ignores=[]), [dataclasses.replace(first, rest_checked=False)]


def _longest_line(text: str) -> int:
    lines = split_lines(text)
    return max(range(len(lines)), key=lambda index: len(lines[index])) + 1


def _issue_from(error: SyntaxError, text: str) -> SyntaxIssue:
    lines = split_lines(text)
    line = min(max(error.lineno or 1, 1), len(lines))
    offset = error.offset or 1
    header = _HEADER_REF.search(error.msg or "") if (error.msg or "").startswith("expected an indented block") else None
    if header and 1 <= int(header.group(1)) <= len(lines):
        # CPython points at the statement after the empty block (in a notebook, maybe the next
        # cell's first line, which is fine); the mistake is the header whose body is missing.
        line = int(header.group(1))
        offset = len(lines[line - 1]) - len(lines[line - 1].lstrip()) + 1
    raw = lines[line - 1]
    # SyntaxError.offset counts characters (1-based) in the line.
    char_col = max(offset - 1, 0)
    char_col = min(char_col, len(raw))
    col = len(raw[:char_col].encode("utf-8"))
    end_col = len(raw.rstrip().encode("utf-8"))
    if end_col <= col:
        end_col = col + 1 if col < len(raw.encode("utf-8")) else col
    message = error.msg or "invalid syntax"
    message = message[0].upper() + message[1:]
    if _ASYNC_KEYWORD_ARGUMENT.match(raw, char_col):
        end_col = col + len("async")
        message += (": `async` has been a reserved word since Python 3.7, so `async=` no longer parses; "
                    "PyTorch renamed this argument `non_blocking` (`.cuda(non_blocking=True)`)")
    elif sys.version_info < (3, 12) and _NESTED_FSTRING_QUOTE.search(raw):
        message += (f": Python 3.12 and later accept an f-string that reuses its own quote inside `{{}}` "
                    f"(PEP 701), but torch-lsp runs on Python {sys.version_info.major}.{sys.version_info.minor} here; "
                    "use the other quote inside the braces, or install torch-lsp on Python 3.12 or later")
    elif sys.version_info < (3, 12) and _TYPE_PARAMETER_SYNTAX.match(raw):
        message += (f": a `type` alias or a generic `class`/`def` with type parameters in brackets is Python 3.12 "
                    f"syntax (PEP 695), but torch-lsp runs on Python {sys.version_info.major}.{sys.version_info.minor} "
                    "here; install torch-lsp on Python 3.12 or later to read these lines")
    return SyntaxIssue(f"Syntax error: {message}.", line, col, end_col)


# `f"{path / "checkpoints"}"`: the f-string's own quote inside its braces, valid from Python 3.12.
_NESTED_FSTRING_QUOTE = re.compile(
    r"""(?<![A-Za-z0-9_])[rRbB]?[fF][rR]?(["'])(?:(?!\1)[^\\{])*\{[^}\n]*\1[^\n]*?\1[^\n]*\}""")

# `type Pairs = list[tuple[int, int]]`, `class Stack[T]:`, `def first[T](items: list[T]) -> T:`:
# PEP 695's type aliases and type parameters, valid from Python 3.12.
_TYPE_PARAMETER_SYNTAX = re.compile(
    r"[ \t]*(?:type[ \t]+[A-Za-z_]\w*[ \t]*(?:\[[^\]\n]*\][ \t]*)?=|(?:async[ \t]+)?(?:class|def)[ \t]+[A-Za-z_]\w*\[)")

# `x.cuda(async=True)`, PyTorch's name for `non_blocking` before 0.4: code of that time fails here.
_ASYNC_KEYWORD_ARGUMENT = re.compile(r"async\s*=(?!=)")


def _blank_line(text: str, line: int, message: str) -> str:
    """`text` with the line at fault (for the error `message`) replaced by same-length
    harmless code."""
    if message.startswith("expected an indented block"):
        header = _HEADER_REF.search(message)
        if header:
            line = int(header.group(1))
    pieces = split_keeping_breaks(text)  # line, break, line, ...
    index = 2 * (line - 1)
    if index >= len(pieces):
        index = len(pieces) - 1 if len(pieces) % 2 else len(pieces) - 2
    if message.startswith("unindent"):
        index = _too_deep_before(pieces, index)
    if message.startswith("unexpected indent"):
        # The whole block indented from here: the body of a header that was half typed,
        # or a block indented one level too deep, is one mistake, reported once.
        blanked = _blank_block(pieces, index)
        return "".join(blanked) if blanked != pieces else text
    original = pieces[index]
    indent = original[: len(original) - len(original.lstrip())]
    width = len(original) - len(indent)
    if message.startswith("unindent"):
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
    if message.startswith("expected an indented block"):
        _blank_orphan_clauses(pieces, index)
    return "".join(pieces)


# The clauses that continue a compound statement at its header's depth.
_CLAUSE = re.compile(r"(?:else|elif|except|finally)\b")
# What starts a statement of its own at that depth: the clauses after it are its own.
_COMPOUND = re.compile(r"(?:if|for|while|try|with|def|class|async|match)\b|@")


def _blank_orphan_clauses(pieces: list[str], index: int) -> None:
    """After the header at `index` (whose body is missing: flattened to its own depth, as a
    paste can leave it) was blanked, the clauses that continued it (`else:`, `elif x:`,
    `except E:`, `finally:`) at its depth would each be one more error for the same mistake:
    they are blanked too (kept as `if 1:` when an indented body follows), up to the next
    compound statement at that depth or the end of the enclosing block."""
    depth = _depth(pieces[index])
    for later in range(index + 2, len(pieces), 2):
        code = pieces[later]
        stripped = code.strip()
        if not stripped or stripped.startswith("#") or _depth(code) > depth:
            continue
        if _depth(code) < depth or _COMPOUND.match(stripped):
            return
        if _CLAUSE.match(stripped):
            indent = code[:depth]
            pieces[later] = (indent + "if 1:".ljust(len(code) - depth) if _heads_block(pieces, later, indent)
                             else " " * len(code))


def _blank_block(pieces: list[str], index: int) -> list[str]:
    """`pieces` with the line at `index` and the lines after it indented at least as deep
    (blank lines and comments among them) turned into spaces."""
    depth = _depth(pieces[index])
    blanked = list(pieces)
    for later in range(index, len(pieces), 2):
        code = pieces[later]
        if later > index and code.strip() and _depth(code) < depth:
            break
        blanked[later] = " " * len(code)
    return blanked


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip())


def _too_deep_before(pieces: list[str], index: int) -> int:
    """The line to blank for an unindent that matches no outer level at `index`: the code
    line before it when that one is indented deeper (it set the level that does not
    match), else the line itself."""
    line = pieces[index]
    for earlier in range(index - 2, -1, -2):
        code = pieces[earlier]
        if code.strip() and not code.lstrip().startswith("#"):
            deeper = len(code) - len(code.lstrip()) > len(line) - len(line.lstrip())
            # A line that closes a bracket (`)` ending a call written over several lines)
            # is the tail of a statement, not one: blanking it would open the bracket again.
            return earlier if deeper and not code.lstrip().startswith((")", "]", "}")) else index
    return index


def _heads_block(pieces: list[str], index: int, indent: str) -> bool:
    """True when the next non-blank line is indented deeper than this one."""
    for later in pieces[index + 2 :: 2]:
        if later.strip() and not later.lstrip().startswith("#"):
            return len(later) - len(later.lstrip()) > len(indent)
    return False
