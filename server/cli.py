"""Command line: serve | check | shapes | rules.  (Minimal; being extended.)"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="torch-lsp")
    sub = parser.add_subparsers(dest="command")
    check = sub.add_parser("check")
    check.add_argument("paths", nargs="+")
    check.add_argument("--format", default="text", choices=["text", "json"])
    args = parser.parse_args(argv)
    if args.command != "check":
        parser.print_help()
        return 2
    from server.checker import check_source

    files = []
    for p in args.paths:
        path = Path(p)
        files.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    out = []
    for f in files:
        source = f.read_text(encoding="utf-8")
        result = check_source(source, str(f))
        for x in result.findings:
            lines = result.analysis.lines
            out.append({"path": str(f), "line": x.line, "column": lines.char_column(x.line, x.col) + 1,
                        "end_line": x.end_line, "end_column": lines.char_column(x.end_line, x.end_col) + 1,
                        "code": x.code, "severity": x.severity, "message": x.message,
                        "fix": {"title": x.fix.title, "safety": x.fix.safety} if x.fix else None})
    if args.format == "json":
        print(json.dumps(out, indent=2))
    else:
        for o in out:
            print(f"{o['path']}:{o['line']}:{o['column']}: {o['code']} {o['message']}")
    return 1 if out else 0
