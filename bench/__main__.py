"""`python -m bench [--quick]`: print torch-lsp's performance figures as one table.

The benchmark never asserts; it measures, in one run on this machine:
  * `ast.parse` on generated 200 / 2,000 / 5,000-line files (the yardstick) and the
    in-process `check_source` on the same files;
  * `torch-lsp check` throughput in lines/s, in process and as a subprocess;
  * the real server over stdio: start-up to the `initialize` response, didOpen and
    didChange (one typed character) to `publishDiagnostics`, and its memory;
  * didOpen to the answer of a `textDocument/diagnostic` sent right after it: the
    complete diagnostics for a pull client, the first step for one that supports refresh.
Target: diagnostics for the 2,000-line file within 3x its `ast.parse` time.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from bench import check_bench, notebook_bench, server_bench
from bench.figures import Row, lines_label, median, ms, render, spread
from bench.generate import EXAMPLES_DIR, REPO_ROOT, generate_source, write_generated

SIZES = [200, 2000, 5000]
TARGET_SIZE = 2000
TARGET_RATIO = 3.0
DATA_DIR = REPO_ROOT / "bench" / ".data"


@dataclass(frozen=True)
class Runs:
    parse: int  # repetitions of ast.parse / check_source per file
    cli: int  # subprocess `check` runs
    startup: int  # server spawns
    open: int  # didOpen runs per size
    change: int  # typed characters per size


FULL = Runs(parse=15, cli=3, startup=5, open=7, change=15)
QUICK = Runs(parse=5, cli=1, startup=2, open=3, change=5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (about a third of the time)")
    args = parser.parse_args(argv)
    runs = QUICK if args.quick else FULL
    print(f"torch-lsp benchmark: Python {platform.python_version()} on {platform.system()} "
          f"{platform.machine()}, {os.cpu_count()} CPUs, {'quick' if args.quick else 'full'} run")

    generated = write_generated(DATA_DIR, SIZES, variant=0)
    parse_seconds = {size: check_bench.ast_parse_seconds(p.read_text(encoding="utf-8"), runs.parse)
                     for size, p in zip(SIZES, generated)}
    rows = engine_rows(generated, parse_seconds, runs)
    rows += server_rows(parse_seconds, runs)
    rows += pull_rows(runs, refreshes=False)
    rows += pull_rows(runs, refreshes=True)
    print(render(rows))
    print(f"target: diagnostics on {TARGET_SIZE:,} lines within {TARGET_RATIO:.0f}x ast.parse "
          f"(ratio column); didChange latency includes the server's debounce.")
    return 0


def engine_rows(generated: list[Path], parse_seconds: dict[int, float], runs: Runs) -> list[Row]:
    rows = []
    for size, path in zip(SIZES, generated):
        rows.append(Row("ast.parse", lines_label(size), ms(parse_seconds[size])))
    for size, path in zip(SIZES, generated):
        seconds, findings = check_bench.check_source_seconds(path.read_text(encoding="utf-8"), str(path), runs.parse)
        rows.append(Row("check_source (in process)", lines_label(size), ms(seconds),
                        f"{seconds / parse_seconds[size]:.1f}x ast.parse, {findings} findings"))

    rows += cost_rows(generated[SIZES.index(TARGET_SIZE)], parse_seconds[TARGET_SIZE], runs)
    rows += notebook_bench.notebook_rows(generated[SIZES.index(TARGET_SIZE)], TARGET_SIZE, parse_seconds[TARGET_SIZE],
                                         runs.parse)

    files = sorted(EXAMPLES_DIR.glob("*.py")) + generated
    total_lines = check_bench.count_lines(files)
    sources = [(p.read_text(encoding="utf-8"), str(p)) for p in files]
    from torch_lsp.checker import check_source

    in_process = check_bench.best_of_median(lambda: [check_source(s, p) for s, p in sources], runs.parse)
    label = f"{len(files)} files, {total_lines:,} lines"
    rows.append(Row("check throughput (in process)", label, f"{total_lines / in_process:,.0f} lines/s",
                    f"{ms(in_process)} per pass"))
    try:
        cli_runs = [check_bench.run_cli_check([EXAMPLES_DIR, *generated], REPO_ROOT) for _ in range(runs.cli)]
        seconds = median([r.seconds for r in cli_runs])
        rows.append(Row("torch-lsp check (subprocess)", label, f"{total_lines / seconds:,.0f} lines/s",
                        f"{ms(seconds)} wall incl. interpreter start, {cli_runs[0].findings} findings"))
    except Exception as error:  # the table still prints; the reason goes in its row
        rows.append(Row("torch-lsp check (subprocess)", label, "unavailable", str(error)))
    return rows


def cost_rows(path: Path, parse_seconds: float, runs: Runs, shown: int = 5) -> list[Row]:
    """Where check_source's time goes on the target file: `analyze`, then the rules that
    cost more than 2% of it (at most `shown`)."""
    analyze_seconds, costs = check_bench.rule_costs(path.read_text(encoding="utf-8"), str(path), max(3, runs.parse // 3))
    label = lines_label(TARGET_SIZE)
    rows = [Row("  breakdown: analyze() (parse + eager facts)", label, ms(analyze_seconds),
                f"{analyze_seconds / parse_seconds:.1f}x ast.parse")]
    costly = [(code, seconds) for code, seconds in costs.items() if seconds >= 0.02 * analyze_seconds]
    for code, seconds in sorted(costly, key=lambda item: -item[1])[:shown]:
        rows.append(Row(f"  breakdown: rule {code} alone (+ its lazy facts)", label, ms(seconds),
                        "" if len(rows) > 1 else "rules share lazy facts, so these overlap"))
    return rows


def server_rows(parse_seconds: dict[int, float], runs: Runs) -> list[Row]:
    log_path = DATA_DIR / "server-stderr.log"
    try:
        startup = server_bench.measure_startup(REPO_ROOT, log_path, runs.startup)
        session = server_bench.start_session(REPO_ROOT, log_path)
    except Exception as error:
        return [Row("server", "", "unavailable", f"{error} (stderr: {log_path})")]
    rows = [Row("server start -> initialize response", "", ms(median(startup)), spread(startup))]
    try:
        idle_rss, _ = server_bench.resident_memory_mib(session.client.process.pid)
        rows.append(Row("server RSS (VmRSS) after initialize", "no documents", f"{idle_rss:.1f} MiB"))
        rows += open_rows(session, runs)
        rows += change_rows(session, parse_seconds, runs)
        rss, peak = server_bench.resident_memory_mib(session.client.process.pid)
        rows.append(Row("server RSS (VmRSS) after opening files", f"{len(session.documents)} open documents",
                        f"{rss:.1f} MiB", f"peak VmHWM {peak:.1f} MiB"))
    except Exception as error:
        rows.append(Row("server", "", "failed", f"{error} (stderr: {log_path})"))
    finally:
        session.client.shutdown()
    return rows


def open_rows(session: server_bench.ServerSession, runs: Runs) -> list[Row]:
    rows = []
    cold_path = DATA_DIR / "open_cold.py"
    cold_path.write_text(generate_source(SIZES[0], variant=100), encoding="utf-8")
    cold, _ = server_bench.open_document(session, cold_path, cold_path.read_text(encoding="utf-8"))
    server_bench.close_document(session, cold_path)
    rows.append(Row("first didOpen after start -> diagnostics", lines_label(SIZES[0]), ms(cold),
                    "includes the server's lazy imports"))
    for size in SIZES:
        samples, counts, parses = [], [], []
        for variant in range(1, runs.open + 1):
            path = DATA_DIR / f"open_{size}_v{variant}.py"
            text = generate_source(size, variant)
            path.write_text(text, encoding="utf-8")
            parses.append(check_bench.ast_parse_seconds(text, 3))
            latency, published = server_bench.open_document(session, path, text)
            samples.append(latency)
            counts.append(len(published.message["params"].get("diagnostics", [])))
            server_bench.close_document(session, path)
        # The yardstick: ast.parse on the very texts that were opened, in this run.
        ratio = median(samples) / median(parses)
        target = f" (target <= {TARGET_RATIO:.0f}x)" if size == TARGET_SIZE else ""
        rows.append(Row("didOpen -> publishDiagnostics", lines_label(size), ms(median(samples)),
                        f"{ratio:.1f}x ast.parse ({ms(median(parses))}){target}; {counts[0]} diagnostics; "
                        f"{spread(samples)}"))
    return rows


def pull_rows(runs: Runs, refreshes: bool) -> list[Row]:
    """didOpen -> the answer to a `textDocument/diagnostic` request sent right after it:
    the complete diagnostics (shape rules included) for a pull client, the first step
    (every rule but the shape rules) for one that supports refresh; fresh texts, so no
    cache answers."""
    kind = "refresh" if refreshes else "pull"
    log_path = DATA_DIR / f"server-stderr-{kind}.log"
    try:
        session = server_bench.start_session(REPO_ROOT, log_path, pulls=True, refreshes=refreshes)
    except Exception as error:
        return [Row(f"server ({kind} client)", "", "unavailable", f"{error} (stderr: {log_path})")]
    try:
        return _pull_rows(session, runs, kind)
    except Exception as error:
        return [Row(f"server ({kind} client)", "", "failed", f"{error} (stderr: {log_path})")]
    finally:
        session.client.shutdown()


def _pull_rows(session: server_bench.ServerSession, runs: Runs, kind: str) -> list[Row]:
    warm_up = DATA_DIR / f"{kind}_cold.py"
    warm_up.write_text(generate_source(SIZES[0], variant=300), encoding="utf-8")
    server_bench.open_and_pull(session, warm_up, warm_up.read_text(encoding="utf-8"))  # lazy imports
    server_bench.close_document(session, warm_up)
    rows = []
    for size in SIZES:
        samples, counts, parses = [], [], []
        for variant in range(1, runs.open + 1):
            path = DATA_DIR / f"{kind}_{size}_v{variant}.py"
            text = generate_source(size, 300 + variant)
            path.write_text(text, encoding="utf-8")
            parses.append(check_bench.ast_parse_seconds(text, 3))
            latency, count = server_bench.open_and_pull(session, path, text)
            samples.append(latency)
            counts.append(count)
            server_bench.close_document(session, path)
        target = f" (target <= {TARGET_RATIO:.0f}x)" if size == TARGET_SIZE else ""
        what, contents = (("first diagnostics (pull, refresh)", "without the shape rules") if kind == "refresh"
                          else ("complete diagnostics (pull)", "incl. shape rules"))
        rows.append(Row(f"didOpen -> {what}", lines_label(size), ms(median(samples)),
                        f"{median(samples) / median(parses):.1f}x ast.parse ({ms(median(parses))}){target}; "
                        f"{counts[0]} diagnostics {contents}; {spread(samples)}"))
    return rows


def change_rows(session: server_bench.ServerSession, parse_seconds: dict[int, float], runs: Runs) -> list[Row]:
    """Types one character (then deletes it, and so on) in the middle of each file;
    the documents stay open for the memory figure."""
    rows = []
    for size in SIZES:
        path = DATA_DIR / f"typing_{size}.py"
        text = generate_source(size, variant=200 + size)
        path.write_text(text, encoding="utf-8")
        server_bench.open_document(session, path, text)
        line, character = server_bench.typing_position(text)
        samples = [server_bench.type_one_character(session, path, line, character, insert=(i % 2 == 0))
                   for i in range(runs.change)]
        sync = "incremental" if session.incremental_sync else "full-text"
        rows.append(Row("didChange (1 char) -> publishDiagnostics", lines_label(size), ms(median(samples)),
                        f"{median(samples) / parse_seconds[size]:.1f}x ast.parse; {sync} sync; {spread(samples)}"))
    return rows


if __name__ == "__main__":
    sys.exit(main())
