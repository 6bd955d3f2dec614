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
    from torch_lsp.shapes.probe.results import ProbeReport
    from torch_lsp.shapes.report import ShapeReport


def shape_records(analysis: "Analysis", report: "ShapeReport", probed: "ProbeReport | None" = None) -> list[dict]:
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
        records.append(record)
    return records


def shapes_json(analysis: "Analysis", report: "ShapeReport", probed: "ProbeReport | None" = None) -> str:
    return json.dumps(shape_records(analysis, report, probed), indent=2) + "\n"


def shapes_text(analysis: "Analysis", report: "ShapeReport", shown_path: str,
                probed: "ProbeReport | None" = None) -> str:
    """`path:line:col: name: [B, T, C]  (from ...)`, one binding per line; with the probe, what
    it says of the binding (`[confirmed by probe]`) and what raised."""
    lines = []
    for record, binding in zip(shape_records(analysis, report, probed), report.bindings):
        origin = f"  ({binding.origin})" if binding.origin else ""
        note = f"  [{record['probe']}]" if record.get("probe") else ""
        lines.append(f"{shown_path}:{record['line']}:{record['column']}: {binding.name}: "
                     f"{binding.tensor.render()}{origin}{note}")
    for failure in probed.failures if probed is not None else ():
        column = analysis.lines.char_column(failure.line, failure.col) + 1
        lines.append(f"{shown_path}:{failure.line}:{column}: TL502 {failure.message}")
    if report.error:
        lines.append(f"{shown_path}: the shape pass stopped on an internal error; shapes after it are missing. "
                     f"Please report it with this traceback:\n{report.error}")
    elif not report.complete:
        lines.append(f"{shown_path}: the shape pass stopped early on this large file; later shapes are missing.")
    return "\n".join(lines) + ("\n" if lines else "")
