"""A notebook's code cells as one Python program, and back.

The checker, the shape engine and the fixes work on one text.  A notebook runs its
code cells in order as one program (a model defined in cell 2 is known in cell 5), so
`NotebookProgram` joins them, IPython's own lines masked (`notebook_magics`), with a
separator comment line between two cells.  Every line of a cell is a line of the
program, with the same characters, so a column in the program is the same column in
the cell; only lines shift, by the cell's `first_line`.  Both front ends use it: the
CLI for `.ipynb` files (`notebook_files`), the server for notebook documents
(`notebook_sync`).

`cells_of` turns a fixed program back into cell texts: the separators say where each
cell ends, and masked lines get IPython's characters back.
"""
from __future__ import annotations

import ast
import bisect
import difflib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from torch_lsp.notebook_magics import mask_magics, unmask_line
from torch_lsp.text import split_lines

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis

# A comment no fix touches; it also tells a reader of the program where a cell ends.
CELL_SEPARATOR = "# ---- torch-lsp: next notebook cell ----"
# "on line 12" in a message or a shape's origin ("other.py, line 12" is a line of another file).
PROGRAM_LINE = re.compile(r"(?<!\.py, )\bline (\d+)\b")


@dataclass(frozen=True)
class CellSpan:
    """Where one code cell lies in the program."""

    number: int  # the cell's 1-based place among all the notebook's cells, as editors count
    first_line: int  # 1-based line of the program where the cell starts
    line_count: int
    source: str  # the cell's text as the notebook holds it
    masked: str  # the same text with IPython's lines masked


@dataclass(frozen=True)
class NotebookProgram:
    source: str
    cells: tuple[CellSpan, ...]

    def cell_at(self, line: int) -> CellSpan | None:
        """The cell holding the program's 1-based `line` (None on a separator)."""
        starts = [cell.first_line for cell in self.cells]
        index = bisect.bisect_right(starts, line) - 1
        if index < 0:
            return None
        cell = self.cells[index]
        return cell if line < cell.first_line + cell.line_count else None

    def cell_line(self, line: int, within: CellSpan | None = None) -> tuple[CellSpan, int]:
        """The cell of the program's 1-based `line` and the 1-based line within it (a line
        outside `within`, or on a separator, is clamped into that cell or the one before)."""
        cell = within or self.cell_at(line) or self._cell_before(line)
        local = line - cell.first_line + 1
        return cell, min(max(local, 1), cell.line_count)

    def _cell_before(self, line: int) -> CellSpan:
        starts = [cell.first_line for cell in self.cells]
        return self.cells[max(bisect.bisect_right(starts, line) - 1, 0)]

    def in_cell_terms(self, text: str) -> str:
        """`text` (a message, a hover) with the program's "line 12" said as "line 2 of cell 3"."""
        def cell_line(match: re.Match) -> str:
            cell, line = self.cell_line(int(match.group(1)))
            return f"line {line} of cell {cell.number}"

        return PROGRAM_LINE.sub(cell_line, text)

    def cell_numbered(self, number: int) -> CellSpan | None:
        return next((cell for cell in self.cells if cell.number == number), None)

    def cells_of(self, fixed: str) -> list[str] | None:
        """The text of each code cell (in order) once the program became `fixed`; None
        when the separators did not survive (the fixed program cannot be split back)."""
        parts = fixed.split("\n" + CELL_SEPARATOR + "\n")
        if len(parts) != len(self.cells):
            return None
        texts = []
        for cell, part in zip(self.cells, parts):
            if _ends_with_break(cell.source):
                part += "\n"  # the break the separator line stood on was the cell's own
            texts.append(cell.source if part == cell.masked else _unmasked(cell, part))
        return texts


def notebook_program(cells: list[tuple[int, str]]) -> NotebookProgram:
    """The program of the code cells given as (1-based cell number, text), in order."""
    pieces: list[str] = []
    spans = []
    line = 1
    for number, source in cells:
        masked = mask_magics(source)
        count = len(split_lines(masked)) - (1 if _ends_with_break(masked) else 0)
        spans.append(CellSpan(number, line, max(count, 1), source, masked))
        body = masked[:-1] if masked.endswith("\n") else masked
        pieces.append(body)
        line += max(count, 1) + 1
    return NotebookProgram(("\n" + CELL_SEPARATOR + "\n").join(pieces), tuple(spans))


def _ends_with_break(text: str) -> bool:
    return text.endswith("\n")


def _unmasked(cell: CellSpan, fixed: str) -> str:
    """`fixed` with IPython's characters restored on the lines a fix kept or rewrote in place."""
    if cell.masked == cell.source:
        return fixed
    masked, original = cell.masked.split("\n"), cell.source.split("\n")
    new = fixed.split("\n")
    out: list[str] = []
    matcher = difflib.SequenceMatcher(None, masked, new, autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        if tag == "equal":
            out += original[a0:a1]
        elif tag == "replace" and a1 - a0 == b1 - b0:
            out += [unmask_line(original[a0 + k], masked[a0 + k], new[b0 + k]) for k in range(b1 - b0)]
        else:
            out += new[b0:b1]
    return "\n".join(out)


def shown_as_cell_output(analysis: "Analysis", statement: ast.stmt) -> bool:
    """IPython displays the value of an expression that is the last statement of its cell
    (`model.load_state_dict(sd, strict=False)` shows the missing and unexpected keys), unless
    a `;` ends it.  True for such a statement of a notebook program (a text with cell
    separators, or an `.ipynb` file)."""
    if not isinstance(statement, ast.Expr) or statement not in analysis.tree.body:
        return False
    lines = analysis.lines
    rest = lines.line_text(statement.end_lineno).encode("utf-8")[statement.end_col_offset:].decode("utf-8", "replace")
    if rest.lstrip().startswith(";"):
        return False
    line = statement.end_lineno + 1
    while line <= len(lines.lines):
        text = lines.line_text(line).strip()
        if text == CELL_SEPARATOR:
            return True
        if text and not text.startswith("#"):
            return False  # another statement of the same cell comes after it
        line += 1
    return is_notebook_program(analysis)


def is_notebook_program(analysis: "Analysis") -> bool:
    """The analysed text is a notebook's cells (an `.ipynb` file, or a text with cell
    separators): a whole program that no other module imports from."""
    return analysis.path.endswith(".ipynb") or CELL_SEPARATOR in analysis.source
