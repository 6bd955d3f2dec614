"""`.ipynb` files: their code cells read, and rewritten with only the changed cells touched.

A notebook file is JSON (nbformat 4): `{"cells": [{"cell_type": "code", "source": ...},
...], "metadata": ...}`, a cell's source a string or a list of lines.  Rewriting a
file with `json.dump` would reformat it (indentation, key order, escapes, numbers in
outputs), so `rewrite_cells` replaces the text of the changed cells' `source` values
only, in the style the file already uses, and leaves every other byte as it was:
outputs, metadata, cell ids, formatting, the final line break.
"""
from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from torch_lsp.files import UnreadableFile, read_checked_bytes
from torch_lsp.notebooks import NotebookProgram, notebook_program

NOTEBOOK_SUFFIX = ".ipynb"
_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


class InvalidNotebook(UnreadableFile):
    """A `.ipynb` file that is not a notebook torch-lsp can read; the message says why."""


@dataclass(frozen=True)
class CodeCellSource:
    number: int  # 1-based place among all cells
    text: str
    span: tuple[int, int]  # where the `source` value lies in the file's text
    as_lines: bool  # a JSON list of lines (else one string)


@dataclass(frozen=True)
class NotebookFile:
    text: str  # the file as read (without a byte-order mark)
    cells: tuple[CodeCellSource, ...]
    program: NotebookProgram

    def rewritten(self, new_sources: list[str]) -> str:
        """The file's text with each code cell's source replaced by `new_sources` (in
        order); a cell whose text did not change keeps its bytes."""
        out, position = [], 0
        for cell, new in zip(self.cells, new_sources):
            if new == cell.text:
                continue
            start, end = cell.span
            out += [self.text[position:start], _source_json(self.text, cell, new)]
            position = end
        out.append(self.text[position:])
        return "".join(out)

    def rewritten_bytes(self, new_sources: list[str], original: bytes) -> bytes:
        """`rewritten` as the file's bytes, its byte-order mark kept."""
        bom = b"\xef\xbb\xbf" if original.startswith(b"\xef\xbb\xbf") else b""
        return bom + self.rewritten(new_sources).encode("utf-8")


def is_notebook(path: str | Path) -> bool:
    return str(path).endswith(NOTEBOOK_SUFFIX)


def read_notebook(path: Path) -> NotebookFile:
    return parse_notebook(read_checked_bytes(path, "clear its outputs to make it smaller"), str(path))


def read_checked_source(path: Path) -> "tuple[str, NotebookProgram | None]":
    """The source to check in a file: a Python file's text, or a notebook's code cells as
    one program (returned too, to map positions back to cells).  Raises `UnreadableFile`,
    or `InvalidNotebook` for a notebook that is not one."""
    from torch_lsp.files import read_python_source

    if is_notebook(path):
        program = read_notebook(path).program
        return program.source, program
    return read_python_source(path), None


def parse_notebook(data: bytes, name: str) -> NotebookFile:
    """The code cells of a notebook file's bytes; `InvalidNotebook` when it is not one."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidNotebook(f"{name} is not a valid notebook: it is not UTF-8 text (byte {error.start}). "
                              "Notebook files are JSON in UTF-8; open and save it again in Jupyter.") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidNotebook(
            f"{name} is not a valid notebook: it is not JSON ({error.msg} at line {error.lineno}, column "
            f"{error.colno}). It was not checked; repair it (a merge conflict left in it?) or open and save it "
            "again in Jupyter."
        ) from None
    cells = _cells_of(document, name)
    _require_python(document, name)
    code = _code_cell_sources(text, cells)
    program = notebook_program([(cell.number, cell.text) for cell in code])
    return NotebookFile(text, tuple(code), program)


def _cells_of(document, name: str) -> list:
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list) or not all(isinstance(cell, dict) for cell in cells):
        found = "nbformat 3 (its cells are in `worksheets`)" if isinstance(document, dict) and "worksheets" in \
            document else "JSON without a `cells` list"
        raise InvalidNotebook(f"{name} is not a notebook torch-lsp can read: it is {found}. It was not checked; "
                              "open and save it in a current Jupyter to convert it to nbformat 4.")
    return cells


def _require_python(document: dict, name: str) -> None:
    metadata = document.get("metadata") if isinstance(document.get("metadata"), dict) else {}
    language = (metadata.get("language_info") or {}).get("name") or (metadata.get("kernelspec") or {}).get("language")
    if isinstance(language, str) and language.lower() not in ("python", "python3", "ipython"):
        raise UnreadableFile(f"{name} was skipped because it is a {language} notebook; torch-lsp checks Python "
                             "notebooks.")


def _code_cell_sources(text: str, cells: list[dict]) -> list[CodeCellSource]:
    """Every code cell with where its `source` lies in `text`."""
    spans = _source_spans(text)
    code = []
    for index, cell in enumerate(cells):
        source = cell.get("source", "")
        if cell.get("cell_type") != "code" or index >= len(spans) or spans[index] is None:
            continue
        as_lines = isinstance(source, list)
        joined = "".join(part for part in source if isinstance(part, str)) if as_lines else str(source)
        code.append(CodeCellSource(index + 1, joined, spans[index], as_lines))
    return code


# -- where each cell's source is in the file's text ------------------------------------
def _source_spans(text: str) -> list[tuple[int, int] | None]:
    """For each cell, the (start, end) of its `source` value in `text` (None without one)."""
    position = _skip(text, 0)
    spans: list[tuple[int, int] | None] = []
    for key, start, end in _members(text, position):
        if key == "cells":
            for cell_start, _ in _items(text, start):
                spans.append(next(((s, e) for k, s, e in _members(text, cell_start) if k == "source"), None))
    return spans


def _skip(text: str, position: int) -> int:
    return _WHITESPACE.match(text, position).end()


def _members(text: str, position: int):
    """(key, value start, value end) of each member of the object at `position`."""
    position = _skip(text, position + 1)  # past "{"
    while text[position] != "}":
        key, position = json.decoder.scanstring(text, position + 1)
        position = _skip(text, _skip(text, position) + 1)  # past ":"
        _, end = _DECODER.raw_decode(text, position)
        yield key, position, end
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)


def _items(text: str, position: int):
    """(start, end) of each item of the array at `position`."""
    position = _skip(text, position + 1)  # past "["
    while text[position] != "]":
        _, end = _DECODER.raw_decode(text, position)
        yield position, end
        position = _skip(text, end)
        if text[position] == ",":
            position = _skip(text, position + 1)


# -- a source value in the file's own style --------------------------------------------
def _source_json(text: str, cell: CodeCellSource, new: str) -> str:
    start, end = cell.span
    old = text[start:end]
    ascii_only = _escapes_non_ascii(text)
    if not cell.as_lines:
        return json.dumps(new, ensure_ascii=ascii_only)
    old_items = [old[s:e] for s, e in _items(old, 0)]
    old_lines = [json.loads(item) for item in old_items]
    new_lines = new.splitlines(keepends=True)
    if not new_lines:
        return "[]"
    items = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            items += old_items[a0:a1]  # unchanged lines keep their bytes
        else:
            items += [json.dumps(line, ensure_ascii=ascii_only) for line in new_lines[b0:b1]]
    opening, separator, closing = _list_layout(old, old_items)
    return "[" + opening + separator.join(items) + closing + "]"


def _list_layout(old: str, old_items: list[str]) -> tuple[str, str, str]:
    """The whitespace after `[`, between items (with the comma) and before `]` of a list."""
    if not old_items:
        return "\n", ",\n", "\n"  # nbformat's usual layout; an empty cell gives no hint
    first = old.index(old_items[0], 1)
    opening = old[1:first]
    closing_start = old.rindex(old_items[-1]) + len(old_items[-1])
    closing = old[closing_start:-1]
    if len(old_items) > 1:
        second = old.index(old_items[1], first + len(old_items[0]))
        separator = old[first + len(old_items[0]):second]
    else:
        separator = "," + opening
    return opening, separator, closing


def _escapes_non_ascii(text: str) -> bool:
    """Whether the file writes non-ASCII characters as `\\uXXXX` escapes (json's ensure_ascii)."""
    if not text.isascii():
        return False
    return "\\u" in text
