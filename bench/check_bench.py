"""Timings of the engine without the server: `ast.parse` (the yardstick), the
in-process `check_source`, and the `torch-lsp check` command as a subprocess."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from bench.figures import median


def best_of_median(action, runs: int) -> float:
    """Median wall time of `action()` in seconds over `runs` calls (after one warm-up call)."""
    action()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return median(samples)


def ast_parse_seconds(source: str, runs: int) -> float:
    return best_of_median(lambda: ast.parse(source), runs)


def check_source_seconds(source: str, path: str, runs: int) -> tuple[float, int]:
    """(median seconds of one in-process check, number of findings)."""
    from torch_lsp.checker import check_source

    findings = len(check_source(source, path).findings)
    return best_of_median(lambda: check_source(source, path), runs), findings



def shape_pass_seconds(source: str, path: str, runs: int, per_context: bool = True) -> float:
    """Median seconds of the shape pass alone (`Engine.run`, collector paused as the server
    runs it) on a fresh analysis each time.  `per_context=False` lets no function run in a
    call context of its own (every call shares the standalone run): the floor that
    evaluating each function once, with symbolic parameters, could bring the pass down to."""
    from torch_lsp.checker import check_source, collector_paused
    from torch_lsp.shapes.interpret import Engine

    samples = []
    for _ in range(runs + 1):  # the first is a warm-up
        analysis = check_source(source, path, shapes=False).analysis
        engine = Engine(analysis)
        if not per_context:
            engine.max_function_contexts = 0
        with collector_paused():
            start = time.perf_counter()
            engine.run()
            samples.append(time.perf_counter() - start)
    return median(samples[1:])

@dataclass
class CliRun:
    seconds: float
    findings: int
    exit_code: int


def run_cli_check(paths: list[Path], cwd: Path) -> CliRun:
    """`python -m torch_lsp check --format json PATHS`, timed from spawn to exit."""
    command = [sys.executable, "-m", "torch_lsp", "check", "--format", "json", *map(str, paths)]
    start = time.perf_counter()
    completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    if completed.returncode not in (0, 1):
        raise RuntimeError(f"`{' '.join(command[1:])}` exited with {completed.returncode}: "
                           f"{completed.stderr.strip()[-500:]}")
    return CliRun(seconds, len(json.loads(completed.stdout or "[]")), completed.returncode)


def count_lines(paths: list[Path]) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)


def rule_costs(source: str, path: str, runs: int) -> tuple[float, dict[str, float]]:
    """(seconds of `analyze` alone, {code: extra seconds of that rule run alone on a fresh
    analysis}).  A rule's cost includes the lazily computed shared facts it is the only
    one to need here, so the costs of several rules overlap where they share facts."""
    from torch_lsp.analysis import analyze
    from torch_lsp.diagnostics import all_rules

    analyze_seconds = best_of_median(lambda: analyze(source, path), runs)
    costs = {}
    for code, rule in all_rules().items():
        alone = best_of_median(lambda: list(rule().check(analyze(source, path))), runs)
        costs[code] = max(alone - analyze_seconds, 0.0)
    return analyze_seconds, costs
