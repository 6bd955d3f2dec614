"""`python -m bench.pytea --root DIR`: the shape probe against PyTea's unit programs.

PyTea (a peer shape checker) ships small programs that either raise a shape error or run
(`packages/pytea/pytest/unit_tests/{fails,passes}` of ropas/pytea, develop branch).  None
is kept here: fetch them, point --root at the folder holding `fails/` and `passes/`, and
this tool builds the truth by running each program with this interpreter's torch (the
line where it raises, or that it runs), then checks each with `torch-lsp check --probe`
in process and prints, per program, whether TL501/TL502/TL503 is on the failing line, and for
those that run, that none is reported.  `--static` checks without the probe (what the
editor shows before any code runs): TL501/TL503 only.  Exit status 1 when the bar is
missed (every raising program reported, none of those that run).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

from torch_lsp.checker import add_probe_findings, check_source
from torch_lsp.settings import Settings
from torch_lsp.shapes import infer_shapes
from torch_lsp.shapes.probe.client import ProbeOptions
from torch_lsp.shapes.probe.session import ProbeSession

SHAPE_CODES = ("TL501", "TL502", "TL503")
TRUTH_SCRIPT = """
import runpy, sys, traceback
path = sys.argv[1]
try:
    runpy.run_path(path, run_name="__main__")
except BaseException as error:
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__) if f.filename == path]
    print("RAISED", lines[-1] if lines else 0, type(error).__name__)
else:
    print("RAN")
"""


def truth(path: Path) -> int | None:
    """The line where the program raises (0: somewhere outside it), or None when it runs."""
    with tempfile.TemporaryDirectory() as scratch:  # the programs may write files
        done = subprocess.run([sys.executable, "-c", TRUTH_SCRIPT, str(path)], cwd=scratch,
                              capture_output=True, text=True, timeout=120)
    words = (done.stdout.strip().splitlines() or ["RAN"])[-1].split()
    return int(words[1]) if words[0] == "RAISED" else None


def reported_lines(session: ProbeSession | None, path: Path) -> set[int]:
    """Lines with a shape finding: statically only when `session` is None."""
    source = path.read_text(encoding="utf-8")
    result = check_source(source, str(path), Settings())
    if session is not None:
        session.probe(result.analysis, infer_shapes(result.analysis), ProbeOptions(), [str(path.parent)])
        result = add_probe_findings(result)
    return {f.line for f in result.findings if f.code in SHAPE_CODES}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.pytea", description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", required=True, help="folder with fails/ and passes/")
    parser.add_argument("--static", action="store_true", help="no probe: what the static pass proves (TL501/TL503)")
    args = parser.parse_args(argv)
    programs = sorted(Path(args.root).glob("*/*.py"))
    if not programs:
        print(f"No programs under {args.root}; nothing was checked.")
        return 0
    session = None if args.static else ProbeSession(os.getcwd(), editor_python=sys.executable)
    raising = hit = running = quiet = 0
    try:
        for path in programs:
            failing = truth(path)
            try:
                lines = reported_lines(session, path)
            except Exception:  # noqa: BLE001 - report and go on
                print(f"{path.name}: internal error\n{traceback.format_exc()}")
                continue
            if failing is not None:
                raising += 1
                ok = failing in lines
                hit += ok
                print(f"{'ok  ' if ok else 'MISS'} raises at line {failing:3}: {path.parent.name}/{path.name} "
                      f"reported {sorted(lines) or 'nothing'}")
            else:
                running += 1
                ok = not lines
                quiet += ok
                print(f"{'ok  ' if ok else 'FALSE'} runs:                {path.parent.name}/{path.name} "
                      f"reported {sorted(lines) or 'nothing'}")
    finally:
        if session is not None:
            session.close()
    print(f"\nraise: {hit} of {raising} reported on the failing line; run: {quiet} of {running} with no report")
    return 0 if hit == raising and quiet == running else 1


if __name__ == "__main__":
    sys.exit(main())
