"""`python -m bench [--quick]`: print torch-lsp's performance figures as one table.

The benchmark never asserts; it measures, in one run on this machine:
  * `ast.parse` on generated 200 / 2,000 / 5,000-line files (the yardstick) and the
    in-process `check_source` on the same files;
  * `torch-lsp check` throughput in lines/s, in process and as a subprocess;
  * the real server over stdio: start-up to the `initialize` response, didOpen and
    didChange (one typed character) to `publishDiagnostics`, and its memory;
  * didOpen to the answer of a `textDocument/diagnostic` sent right after it: the
    complete diagnostics for a pull client, the first step for one that supports refresh,
    and for a file that `workspace/diagnostic` already checked (as VS Code asks at start);
  * one character typed in a function of a 2,000 / 5,000-line file: edit -> first publish
    and edit -> complete diagnostics, checked incrementally and, alternately in the same
    run, the whole-file way (`edit_bench`);
  * the server's memory with 20 open 2,000-line documents through hundreds of edits,
    and after closing them;
  * hover latency in a checked file during an edit storm over 50 other files, and how
    soon a typing storm in one file settles (`storm_bench`);
  * how soon the server is gone after shutdown + exit, stdin closing or the client
    being killed, in the middle of a check;
  * torch-lsp beside ruff's server and jedi-language-server, where installed: start-up,
    edit -> publish, hover, memory with 20 documents (`peer_bench`).
`--only memory` (and so on) runs one part.
Target: complete diagnostics (shape rules included) for the 2,000-line file within 3x its
`ast.parse` time (the pull scenario's didOpen row).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from bench import check_bench, edit_bench, memory_bench, notebook_bench, peer_bench, server_bench, storm_bench
from bench.figures import Row, lines_label, median, ms, render, spread
from bench.generate import EXAMPLES_DIR, REPO_ROOT, generate_source, write_generated

SCENARIOS = ("engine", "server", "pull", "edit", "memory", "storm", "peers")
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
    memory_edits: int  # edits over the open documents of the memory scenario
    storm_edits: int  # edits of the hover-during-a-storm scenario (over STORM_FILES files)
    more_memory_edits: int  # further edits, for the growth figure
    edits: int  # typed characters per size and mode of the edit scenario
    peer_edits: int  # edits over the open documents, for each server of the comparison


FULL = Runs(parse=15, cli=3, startup=5, open=7, change=15, memory_edits=500, storm_edits=1000,
            more_memory_edits=1000, edits=11, peer_edits=100)
QUICK = Runs(parse=5, cli=1, startup=2, open=3, change=5, memory_edits=100, storm_edits=200,
             more_memory_edits=0, edits=5, peer_edits=20)
EDIT_SIZES = [2000, 5000]
EDIT_TARGET_RATIO = 1.0
MEMORY_DOCUMENTS = 20
STORM_FILES = 50
STORM_RATE = 20.0  # edits per second


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (about a third of the time)")
    parser.add_argument("--only", choices=SCENARIOS, action="append",
                        help="run only these parts of the benchmark (repeatable; default: all)")
    memory = parser.add_argument_group("memory scenario")
    memory.add_argument("--edits", type=int, metavar="N",
                        help=f"edits over the open documents (default {FULL.memory_edits}, quick {QUICK.memory_edits})")
    memory.add_argument("--growth-edits", type=int, metavar="N",
                        help=f"further edits for the growth figure (default {FULL.more_memory_edits}, quick "
                             f"{QUICK.more_memory_edits}; 0: none)")
    memory.add_argument("--documents", type=int, default=MEMORY_DOCUMENTS, metavar="N",
                        help=f"open documents (default {MEMORY_DOCUMENTS})")
    memory.add_argument("--lines", type=int, default=TARGET_SIZE, metavar="N",
                        help=f"lines per document (default {TARGET_SIZE:,})")
    args = parser.parse_args(argv)
    only = set(args.only or SCENARIOS)
    runs = QUICK if args.quick else FULL
    runs = dataclasses.replace(runs, memory_edits=runs.memory_edits if args.edits is None else args.edits,
                               more_memory_edits=runs.more_memory_edits if args.growth_edits is None
                               else args.growth_edits)
    print(f"torch-lsp benchmark: Python {platform.python_version()} on {platform.system()} "
          f"{platform.machine()}, {os.cpu_count()} CPUs, {'quick' if args.quick else 'full'} run")

    generated = write_generated(DATA_DIR, SIZES, variant=0)
    parse_seconds = {size: check_bench.ast_parse_seconds(p.read_text(encoding="utf-8"), runs.parse)
                     for size, p in zip(SIZES, generated)}
    rows = [Row("ast.parse", lines_label(size), ms(parse_seconds[size])) for size in SIZES]
    if "engine" in only:
        rows += engine_rows(generated, parse_seconds, runs)
    if "server" in only:
        rows += server_rows(parse_seconds, runs)
    if "pull" in only:
        rows += pull_rows(runs, refreshes=False)
        rows += pull_rows(runs, refreshes=True)
        rows += workspace_open_rows(runs)
    if "edit" in only:
        rows += edit_rows(runs)
    if "memory" in only:
        rows += memory_rows(runs, args.documents, args.lines)
    if "storm" in only:
        rows += storm_rows(runs)
    if "peers" in only:
        rows += peer_rows(runs, args.documents, args.lines)
    print(render(rows))
    print(f"targets: didOpen -> complete diagnostics (pull) on {TARGET_SIZE:,} lines within "
          f"{TARGET_RATIO:.0f}x ast.parse, edit -> complete diagnostics within {EDIT_TARGET_RATIO:.0f}x "
          f"(ratio column); didChange latency includes the server's debounce.")
    return 0


def engine_rows(generated: list[Path], parse_seconds: dict[int, float], runs: Runs) -> list[Row]:
    rows = []
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
    """Where check_source's time goes on the target file: `analyze`, the shape pass (and
    what it would cost if no function ran once per call context), then the rules that
    cost more than 2% of it (at most `shown`)."""
    analyze_seconds, costs = check_bench.rule_costs(path.read_text(encoding="utf-8"), str(path), max(3, runs.parse // 3))
    label = lines_label(TARGET_SIZE)
    rows = [Row("  breakdown: analyze() (parse + eager facts)", label, ms(analyze_seconds),
                f"{analyze_seconds / parse_seconds:.1f}x ast.parse")]
    source = path.read_text(encoding="utf-8")
    shapes = check_bench.shape_pass_seconds(source, str(path), runs.parse)
    floor = check_bench.shape_pass_seconds(source, str(path), runs.parse, per_context=False)
    rows.append(Row("  breakdown: shape pass (infer_shapes)", label, ms(shapes),
                    f"{shapes / parse_seconds:.1f}x ast.parse"))
    rows.append(Row("  breakdown: shape pass, no per-context runs", label, ms(floor),
                    f"{floor / parse_seconds:.1f}x ast.parse; the floor for function summaries"))
    costly = [(code, seconds) for code, seconds in costs.items() if seconds >= 0.02 * analyze_seconds]
    for index, (code, seconds) in enumerate(sorted(costly, key=lambda item: -item[1])[:shown]):
        rows.append(Row(f"  breakdown: rule {code} alone (+ its lazy facts)", label, ms(seconds),
                        "rules share lazy facts, so these overlap" if index == 0 else ""))
    return rows


def server_rows(parse_seconds: dict[int, float], runs: Runs) -> list[Row]:
    log_path = DATA_DIR / "server-stderr.log"
    try:
        startup = server_bench.measure_startup(REPO_ROOT, log_path, runs.startup)
        session = server_bench.start_session(REPO_ROOT, log_path)
    except Exception as error:
        return [Row("server", "", "unavailable", f"{error} (stderr: {log_path})")]
    rows = [Row("server start -> initialize response", "", ms(median(startup)),
                f"{spread(startup)}; target < 300 ms")]
    rows += exit_rows(log_path)
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


def exit_rows(log_path: Path) -> list[Row]:
    """From the client's goodbye, sent while a 5,000-line file is checked, to the server's end."""
    path = DATA_DIR / "exit_during_check.py"
    text = generate_source(SIZES[-1], variant=400)
    path.write_text(text, encoding="utf-8")
    rows = []
    for way in server_bench.EXIT_WAYS:
        try:
            seconds = server_bench.measure_exit(REPO_ROOT, log_path, way, path, text)
            rows.append(Row(f"{way} during a check -> process gone", lines_label(SIZES[-1]), ms(seconds),
                            "target < 1 s"))
        except Exception as error:
            rows.append(Row(f"{way} during a check -> process gone", "", "failed", str(error)))
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
        # The first publish holds every rule but the shape rules; the target is the complete
        # diagnostics' (`pull_rows`), so this row carries none.
        rows.append(Row("didOpen -> first publishDiagnostics", lines_label(size), ms(median(samples)),
                        f"{ratio:.1f}x ast.parse ({ms(median(parses))}); {counts[0]} diagnostics "
                        f"without the shape rules; "
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
        # The target is the complete diagnostics' (shape rules included), not the first step's.
        target = f" (target <= {TARGET_RATIO:.0f}x)" if size == TARGET_SIZE and kind == "pull" else ""
        what, contents = (("first diagnostics (pull, refresh)", "without the shape rules") if kind == "refresh"
                          else ("complete diagnostics (pull)", "incl. shape rules"))
        rows.append(Row(f"didOpen -> {what}", lines_label(size), ms(median(samples)),
                        f"{median(samples) / median(parses):.1f}x ast.parse ({ms(median(parses))}){target}; "
                        f"{counts[0]} diagnostics {contents}; {spread(samples)}"))
    return rows


def workspace_open_rows(runs: Runs) -> list[Row]:
    """didOpen -> the first answer to a `textDocument/diagnostic` sent right after it, for
    files of a workspace that a refresh client (VS Code's) had pulled `workspace/diagnostic`
    for, as it does at start: the files are opened unchanged, so the answer is the complete
    diagnostics the background check made of the same text (the file's own check follows)."""
    folder = DATA_DIR / "workspace_open"
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.py"):
        stale.unlink()
    texts = {}
    for variant in range(1, runs.open + 1):
        path = folder / f"opened_{TARGET_SIZE}_v{variant}.py"
        texts[path] = generate_source(TARGET_SIZE, 700 + variant)
        path.write_text(texts[path], encoding="utf-8")
    log_path = DATA_DIR / "server-stderr-workspace.log"
    what = "didOpen of a file workspace/diagnostic checked -> complete diagnostics (pull, refresh)"
    try:
        session = server_bench.start_session(folder, log_path, pulls=True, refreshes=True)
    except Exception as error:
        return [Row(what, "", "unavailable", f"{error} (stderr: {log_path})")]
    try:
        reported = server_bench.pull_workspace(session)
        samples, parses, counts = [], [], []
        for path, text in texts.items():
            parses.append(check_bench.ast_parse_seconds(text, 3))
            latency, count = server_bench.open_and_pull(session, path, text)
            samples.append(latency)
            counts.append((count, reported.get(path.as_uri())))
            server_bench.close_document(session, path)
    except Exception as error:
        return [Row(what, "", "failed", f"{error} (stderr: {log_path})")]
    finally:
        session.client.shutdown()
    count, in_report = counts[0]
    return [Row(what, lines_label(TARGET_SIZE), ms(median(samples)),
                f"{median(samples) / median(parses):.1f}x ast.parse ({ms(median(parses))}); {count} diagnostics "
                f"incl. shape rules (the workspace report: {in_report}); {spread(samples)}")]


def edit_rows(runs: Runs) -> list[Row]:
    """One character typed in a function: edit -> first publish (push) and edit -> complete
    diagnostics (pull), incremental and whole-file alternately (target: complete within
    1x ast.parse of the file, debounce included)."""
    try:
        measured = edit_bench.measure(REPO_ROOT, DATA_DIR, EDIT_SIZES, runs.edits)
    except Exception as error:
        return [Row("edit scenario", "", "failed", str(error))]
    rows = []
    for figures in measured:
        parse = median(figures.parse)
        for what, samples, target in (("first publish (push, debounce incl.)", figures.first_publish, ""),
                                      ("complete diagnostics (pull)", figures.complete,
                                       f"; target <= {EDIT_TARGET_RATIO:.0f}x")):
            now, before = median(samples["incremental"]), median(samples["whole-file"])
            rows.append(Row(f"edit (1 char in a function) -> {what}", lines_label(figures.lines), ms(now),
                            f"{now / parse:.1f}x ast.parse ({ms(parse)}){target}; whole-file {ms(before)} "
                            f"({before / parse:.1f}x); {spread(samples['incremental'])}"))
        costs = edit_bench.check_costs(figures.lines, max(3, runs.parse // 3))
        for part, label in (("analyze", "parse in part + eager facts"), ("rules", "every rule but the shape rules"),
                            ("shapes", "shape pass + shape rules")):
            rows.append(Row(f"  edit check in process: {label}", lines_label(figures.lines), ms(costs[part]),
                            f"{costs[part] / costs['ast.parse']:.1f}x ast.parse ({ms(costs['ast.parse'])}, "
                            f"collector paused)"))
    return rows


def memory_rows(runs: Runs, documents: int, lines: int) -> list[Row]:
    """RSS with `documents` open documents of `lines` lines (20 of 2,000 by default) through
    a run of edits, and after closing them (targets: under 150 MB open, under 100 MB
    closed, no growth)."""
    try:
        figures = memory_bench.measure(REPO_ROOT, DATA_DIR, documents, lines, runs.memory_edits,
                                       runs.more_memory_edits)
    except Exception as error:
        return [Row("server memory scenario", "", "failed", str(error))]
    label = f"{figures.documents} x {lines_label(figures.lines)}"
    rows = [
        Row("memory: server RSS once serving", "no documents", f"{figures.idle_mib:.1f} MiB"),
        Row("memory: RSS with documents open", label, f"{figures.opened_mib:.1f} MiB"),
        Row(f"memory: RSS after {figures.edits} edits", label, f"{figures.edited_mib:.1f} MiB",
            f"target < 150 MB; {figures.edit_seconds / max(1, figures.edits) * 1000:.0f} ms per edit "
            f"to its publish; peak VmHWM {figures.peak_mib:.1f} MiB"),
    ]
    if figures.more_edited_mib is not None:
        rows.append(Row(f"memory: RSS after {figures.more_edits} more edits", label,
                        f"{figures.more_edited_mib:.1f} MiB",
                        f"{figures.more_edited_mib - figures.edited_mib:+.1f} MiB (target: no growth); "
                        f"{figures.more_edit_seconds / max(1, figures.more_edits) * 1000:.0f} ms per edit"))
        series = ", ".join(f"{done:,}: {mib:.0f}" for done, mib in figures.growth)
        rows.append(Row("memory: RSS along the further edits", label, "MiB", f"edits: MiB  {series}"))
    for seconds, mib in figures.closed_mib:
        rows.append(Row(f"memory: RSS {seconds:.0f} s after closing them all", "", f"{mib:.1f} MiB",
                        "target < 100 MB" if seconds == figures.closed_mib[-1][0] else ""))
    return rows


def peer_rows(runs: Runs, documents: int, lines: int) -> list[Row]:
    """torch-lsp, ruff's server and jedi-language-server, each measured the same way."""
    servers = [("torch-lsp", None, True)]
    rows = []
    for name, executable, arguments, hovers_code in peer_bench.PEERS:
        command = peer_bench.peer_command(executable, arguments)
        if command is None:
            rows.append(Row(f"{name}: skipped", "", "not installed", f"pip install {executable.split()[0]}"))
        else:
            servers.append((name, command, hovers_code))
    for name, command, hovers_code in servers:
        try:
            figures = peer_bench.measure(name, command, REPO_ROOT, DATA_DIR, runs.startup, runs.change, documents,
                                         lines, runs.peer_edits, hovers_code)
        except Exception as error:
            rows.append(Row(f"{name}: comparison", "", "failed", str(error)))
            continue
        notes = "; ".join(figures.notes)
        rows.append(Row(f"{name}: start -> initialize response", "", ms(median(figures.startup_s)),
                        spread(figures.startup_s)))
        if figures.change_s:
            rows.append(Row(f"{name}: didChange (1 char) -> publishDiagnostics", lines_label(lines),
                            ms(median(figures.change_s)), spread(figures.change_s)))
        if figures.hover_s:
            hovers = sorted(figures.hover_s)
            p95 = hovers[min(len(hovers) - 1, int(0.95 * len(hovers)))]
            rows.append(Row(f"{name}: hover", lines_label(lines), f"{ms(median(hovers))}",
                            f"p95 {ms(p95)}, n={len(hovers)}"))
        rows.append(Row(f"{name}: RSS after {figures.edits} edits", f"{figures.documents} x {lines_label(lines)}",
                        f"{figures.rss_mib:.1f} MiB", notes))
    return rows


def storm_rows(runs: Runs) -> list[Row]:
    """Hover latency in a checked file while STORM_FILES other files are edited, and how
    soon a typing storm in one 2,000-line file settles."""
    rows = []
    try:
        figures = storm_bench.hover_during_storm(REPO_ROOT, DATA_DIR, STORM_FILES, SIZES[0], runs.storm_edits,
                                                 STORM_RATE)
        hovers = sorted(figures.hovers)
        p99 = hovers[min(len(hovers) - 1, int(0.99 * len(hovers)))]
        rows.append(Row(f"hover during a {figures.edits}-edit storm over {figures.files} files", "200-line file",
                        f"p99 {ms(p99)}", f"median {ms(median(hovers))}, max {ms(hovers[-1])}, "
                        f"n={len(hovers)}; target p99 < 50 ms"))
    except Exception as error:
        rows.append(Row("hover during an edit storm", "", "failed", str(error)))
    edits = int(STORM_RATE * 10)
    for mode, env in edit_bench.MODES.items():
        try:
            settle = storm_bench.typing_storm(REPO_ROOT, DATA_DIR, TARGET_SIZE, edits, STORM_RATE, env)
            rows.append(Row(f"typing storm ({edits} edits at {STORM_RATE:.0f}/s, {mode}): last edit -> first publish",
                            lines_label(TARGET_SIZE), ms(settle.first_publish_s)))
            rows.append(Row(f"typing storm ({mode}): last edit -> complete diagnostics", lines_label(TARGET_SIZE),
                            ms(settle.settled_s),
                            f"target < 150 ms; {settle.stale_publishes} stale versions published"))
        except Exception as error:
            rows.append(Row(f"typing storm ({mode})", "", "failed", str(error)))
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
