"""The server's memory over a long editing session: many large documents open, an edit
after another spread over them, then every document closed.

Figures (VmRSS of the server process, read from /proc): after initialize, after opening
the documents, after the edits, a few seconds after closing them, and, for the growth
figure, after a further run of edits (its RSS against the first run's).  Every edit
waits for the diagnostics published for its version, so each one is a full check.
"""
from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import server_bench

GROWTH_POINTS = 10  # RSS samples along the further edits


@dataclass
class MemoryFigures:
    documents: int
    lines: int
    idle_mib: float = 0.0
    opened_mib: float = 0.0
    edited_mib: float = 0.0
    edits: int = 0
    edit_seconds: float = 0.0
    more_edits: int = 0
    more_edited_mib: float | None = None
    more_edit_seconds: float = 0.0
    # RSS along the further edits: (edits so far, MiB), for the growth figure.
    growth: list[tuple[int, float]] = field(default_factory=list)
    closed_mib: list[tuple[float, float]] = field(default_factory=list)  # (seconds after closing, MiB)
    peak_mib: float = 0.0


def measure(root: Path, data_dir: Path, documents: int, lines: int, edits: int, more_edits: int = 0,
            after_close_s: tuple[float, ...] = (1.0, 3.0, 6.0)) -> MemoryFigures:
    log_path = data_dir / "server-stderr-memory.log"
    session = server_bench.start_session(root, log_path)
    figures = MemoryFigures(documents, lines)
    pid = session.client.process.pid
    try:
        server_bench.wait_until_serving(session)
        time.sleep(0.5)
        figures.idle_mib, _ = server_bench.resident_memory_mib(pid)
        paths = server_bench.open_generated(session, data_dir, "memory_", documents, lines, first_variant=500)
        figures.opened_mib, _ = server_bench.resident_memory_mib(pid)
        started = time.perf_counter()
        _edit_round_robin(session, paths, edits)
        figures.edits, figures.edit_seconds = edits, time.perf_counter() - started
        time.sleep(1.0)  # the last complete passes
        figures.edited_mib, _ = server_bench.resident_memory_mib(pid)
        if more_edits:
            started = time.perf_counter()
            step = max(1, more_edits // GROWTH_POINTS)
            for done in range(0, more_edits, step):
                _edit_round_robin(session, paths, min(step, more_edits - done), first=edits + done)
                figures.growth.append((done + min(step, more_edits - done), server_bench.resident_memory_mib(pid)[0]))
                # As it goes (stderr), so that a long run stopped early still tells its trend.
                print(f"memory growth: {figures.growth[-1][0]:,} further edits, RSS {figures.growth[-1][1]:.1f} MiB, "
                      f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
            figures.more_edit_seconds = time.perf_counter() - started
            time.sleep(1.0)
            figures.more_edits = more_edits
            figures.more_edited_mib, _ = server_bench.resident_memory_mib(pid)
        for path in paths:
            server_bench.close_document(session, path)
        closed_at = time.perf_counter()
        for seconds in after_close_s:
            time.sleep(max(0.0, closed_at + seconds - time.perf_counter()))
            figures.closed_mib.append((seconds, server_bench.resident_memory_mib(pid)[0]))
        figures.peak_mib = server_bench.resident_memory_mib(pid)[1]
    finally:
        session.client.shutdown()
    return figures


def _edit_round_robin(session: server_bench.ServerSession, paths: list[Path], edits: int, first: int = 0) -> None:
    """One typed (then deleted) character at a time, each in the next document; `first`:
    edits made before (so that every document goes on typing where it stopped)."""
    positions = {path: server_bench.typing_position(session.documents[path.as_uri()].text) for path in paths}
    for edit in range(first, first + edits):
        path = paths[edit % len(paths)]
        line, character = positions[path]
        typed = edit // len(paths)  # edits this document had before this one
        server_bench.type_one_character(session, path, line, character, insert=typed % 2 == 0)
