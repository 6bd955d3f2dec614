"""`torch-lsp shapes FILE`: the inferred shapes of a file as text or JSON.

JSON is an array with one object per tensor-valued name binding (assignment,
tuple-unpacking and `for` targets, function parameters) whose shape is at least
partly known, in source order, with exactly the keys `line`, `column` (both
1-based; the column counts code points, like `torch-lsp check`), `name` and
`shape` (a list of dims: ints, or strings such as "B", "3*n_embd",
"(H-3)//2+1"; "?" is an unknown size and a leading "*" unknown leading dims).
For a notebook, each object also has `cell` (1-based, among all its cells) and `line`
counts within that cell; the text form says `path:cell N:line:col`.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.probe.results import ProbeReport
    from torch_lsp.shapes.report import ShapeReport


def shape_records(analysis: "Analysis", report: "ShapeReport", probed: "ProbeReport | None" = None,
                  program=None) -> list[dict]:
    """One record per binding; `program` (`torch_lsp.notebooks`) places them in a notebook's cells."""
    records = []
    for binding in report.bindings:
        record = {
            "line": binding.line,
            "column": analysis.lines.char_column(binding.line, binding.col) + 1,
            "name": binding.name,
            "shape": binding.dims,
        }
        if probed is not None:
            record["probe"] = probed.note_for(binding.line, binding.name, binding.dims)
        if program is not None:
            cell, record["line"] = program.cell_line(binding.line)
            record = {"cell": cell.number, **record}
        records.append(record)
    return records


def shapes_json(analysis: "Analysis", report: "ShapeReport", probed: "ProbeReport | None" = None,
                program=None) -> str:
    return json.dumps(shape_records(analysis, report, probed, program), indent=2) + "\n"


def shapes_text(analysis: "Analysis", report: "ShapeReport", shown_path: str,
                probed: "ProbeReport | None" = None, program=None) -> str:
    """`path:line:col: name: [B, T, C]  (from ...)`, one binding per line; with the probe, what
    it says of the binding (`[confirmed by probe]`) and what raised."""
    lines = []
    for record, binding in zip(shape_records(analysis, report, probed, program), report.bindings):
        origin = f"  ({binding.origin if program is None else program.in_cell_terms(binding.origin)})" \
            if binding.origin else ""
        note = f"  [{record['probe']}]" if record.get("probe") else ""
        cell = f"cell {record['cell']}:" if "cell" in record else ""
        lines.append(f"{shown_path}:{cell}{record['line']}:{record['column']}: {binding.name}: "
                     f"{binding.tensor.render()}{origin}{note}")
    for failure in probed.failures if probed is not None else ():
        column = analysis.lines.char_column(failure.line, failure.col) + 1
        where = f"{failure.line}"
        if program is not None:
            cell, line = program.cell_line(failure.line)
            where = f"cell {cell.number}:{line}"
        lines.append(f"{shown_path}:{where}:{column}: TL502 {failure.message}")
    if report.error:
        lines.append(f"{shown_path}: the shape pass stopped on an internal error; shapes after it are missing. "
                     f"Please report it with this traceback:\n{report.error}")
    elif not report.complete:
        lines.append(f"{shown_path}: the shape pass stopped early on this large file; later shapes are missing.")
    return "\n".join(lines) + ("\n" if lines else "")
