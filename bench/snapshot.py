"""`python -m bench.snapshot OUT.jsonl PATH...`: everything a user sees, for before/after checks.

A refactoring must not change behaviour.  This writes one JSON line per Python file
under the given paths with what the CLI and the server would show for it:

  * every finding of every rule (off-by-default ones included): code, range, severity,
    message and the offered fix;
  * the shape pass: each tensor binding with its dims and origin, each inlay hint, each
    mismatch, and (with --hover) the hover text at every name and attribute;
  * what fix-all makes of the file, safe fixes and unsafe ones (a digest of the text).

Compare two snapshots with `diff` (lines are in path order).  Only the standard library
and torch-lsp's public entry points are used, so the same tool reads the code before and
after a restructuring.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import json
import sys
from pathlib import Path

from torch_lsp.checker import check_source
from torch_lsp.diagnostics import all_rules
from torch_lsp.codeactions.fix_all import fix_all
from torch_lsp.settings import Selection, Settings
from torch_lsp.shapes import infer_shapes

# Every rule by its full code: a prefix never turns on a rule that is off by default (TL409).
EVERY_RULE = Settings().with_selection(Selection(select=tuple(all_rules())))
MAX_BYTES = 2_000_000


def python_files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for path in map(Path, paths):
        found.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return found


def digest(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def hover_points(tree: ast.AST) -> list[tuple[int, int]]:
    points = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.ClassDef, ast.FunctionDef)):
            points.add((node.lineno, node.col_offset))
        if isinstance(node, ast.Attribute) and node.end_col_offset is not None:
            points.add((node.end_lineno, node.end_col_offset - len(node.attr)))
    return sorted(points)


def snapshot_file(path: Path, with_hover: bool) -> dict:
    source = path.read_text(encoding="utf-8", errors="surrogateescape")
    result = check_source(source, str(path), EVERY_RULE)
    record: dict = {"path": str(path), "findings": [
        [f.code, f.line, f.col, f.end_line, f.end_col, f.severity, f.message,
         [f.fix.title, f.fix.safety] if f.fix else None]
        for f in result.findings
    ]}
    report = infer_shapes(result.analysis)
    record["shapes"] = [[b.line, b.col, b.end_col, b.name, b.kind, b.dims, b.origin] for b in report.bindings]
    record["hints"] = [[h.line, h.col, h.label, h.tooltip] for h in report.inlay_hints()]
    record["mismatches"] = [[m.line, m.col, m.end_line, m.end_col, m.message] for m in report.mismatches]
    if with_hover and result.analysis.tree is not None:
        hovers = []
        for line, col in hover_points(result.analysis.tree):
            hover = report.hover(line, col)
            if hover is not None:
                hovers.append([line, col, hover.line, hover.col, hover.end_line, hover.end_col, hover.markdown])
        record["hovers"] = hovers
    if result.findings:
        record["fix_safe"] = digest(fix_all(source, str(path), EVERY_RULE).source)
        record["fix_unsafe"] = digest(fix_all(source, str(path), EVERY_RULE, unsafe=True).source)
    return record


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.snapshot", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", help="the JSON-lines file to write")
    parser.add_argument("paths", nargs="+", help="files and folders (walked for *.py)")
    parser.add_argument("--hover", action="store_true", help="also record the hover at every name")
    args = parser.parse_args(argv)
    with open(args.out, "w", encoding="utf-8") as out:
        for path in python_files(args.paths):
            if path.stat().st_size > MAX_BYTES:
                continue
            try:
                record = snapshot_file(path, args.hover)
            except Exception as error:  # noqa: BLE001 - a crash is itself part of the behaviour
                record = {"path": str(path), "crash": f"{type(error).__name__}: {error}"}
            out.write(json.dumps(record, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
