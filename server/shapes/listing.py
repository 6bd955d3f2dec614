"""`torch-lsp shapes FILE`: the inferred shapes of a file as text or JSON.

JSON is an array with one object per tensor-valued name binding (assignment,
tuple-unpacking and `for` targets, function parameters) whose shape is at least
partly known, in source order, with exactly the keys `line`, `column` (both
1-based; the column counts code points, like `torch-lsp check`), `name` and
`shape` (a list of dims: ints, or strings such as "B", "3*n_embd",
"(H-3)//2+1"; "?" is an unknown size and a leading "*" unknown leading dims).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torch_lsp.analysis import Analysis
    from torch_lsp.shapes.report import ShapeReport


def shape_records(analysis: "Analysis", report: "ShapeReport") -> list[dict]:
    records = []
    for binding in report.bindings:
        records.append({
            "line": binding.line,
            "column": analysis.lines.char_column(binding.line, binding.col) + 1,
            "name": binding.name,
            "shape": binding.dims,
        })
    return records


def shapes_json(analysis: "Analysis", report: "ShapeReport") -> str:
    return json.dumps(shape_records(analysis, report), indent=2) + "\n"


def shapes_text(analysis: "Analysis", report: "ShapeReport", shown_path: str) -> str:
    """`path:line:col: name: [B, T, C]  (from ...)`, one binding per line."""
    lines = []
    for record, binding in zip(shape_records(analysis, report), report.bindings):
        origin = f"  ({binding.origin})" if binding.origin else ""
        lines.append(f"{shown_path}:{record['line']}:{record['column']}: {binding.name}: "
                     f"{binding.tensor.render()}{origin}")
    if report.error:
        lines.append(f"{shown_path}: the shape pass stopped on an internal error; shapes after it are missing. "
                     f"Please report it with this traceback:\n{report.error}")
    elif not report.complete:
        lines.append(f"{shown_path}: the shape pass stopped early on this large file; later shapes are missing.")
    return "\n".join(lines) + ("\n" if lines else "")
