"""`python -m bench.torchfix_bench [PATH ...]`: `torch-lsp check` against TorchFix on the same files.

Both run as the user runs them, as a command on the same paths (default: the rule fixtures
in tests/rules/fixtures), the median of a few runs each, start-up included: `torch-lsp
check` with every default rule, `torchfix --select ALL` (every TOR check).  TorchFix comes
from `TORCHFIX_PYTHON` (an interpreter with torchfix installed; it pins an older libcst, so
it lives in its own virtualenv, e.g. the one tests/rules/test_torchfix_cross_check.py
makes under ~/.cache/torch-lsp-tests/).  Prints the figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.figures import median

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = [REPO_ROOT / "tests" / "rules" / "fixtures"]
DEFAULT_TORCHFIX = Path(os.path.expanduser("~")) / ".cache" / "torch-lsp-tests" / "torchfix-0.7.0" / "bin" / "python"


def timed(command: list[str], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, text=True)
        samples.append(time.perf_counter() - start)
    return median(samples)


def python_files(paths: list[Path]) -> list[Path]:
    files = []
    for path in paths:
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.torchfix_bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=DEFAULT_PATHS)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    torchfix = os.environ.get("TORCHFIX_PYTHON") or str(DEFAULT_TORCHFIX)
    if not Path(torchfix).exists():
        print(f"No TorchFix interpreter at {torchfix}: set TORCHFIX_PYTHON to one with torchfix installed.")
        return 2
    files = python_files(args.paths)
    lines = sum(len(f.read_bytes().splitlines()) for f in files)
    paths = [str(p) for p in args.paths]
    ours = timed([sys.executable, "-m", "torch_lsp", "check", *paths], args.runs)
    theirs = timed([torchfix, "-m", "torchfix", "--select", "ALL", *paths], args.runs)
    print(f"{len(files)} files, {lines:,} lines; median of {args.runs} runs, start-up included")
    print(f"  torch-lsp check             {ours:8.2f} s  {lines / ours:10,.0f} lines/s")
    print(f"  torchfix --select ALL       {theirs:8.2f} s  {lines / theirs:10,.0f} lines/s")
    print(f"  torch-lsp is {theirs / ours:.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
