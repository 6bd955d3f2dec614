"""The server under a stream of edits: how long requests about a checked document wait
meanwhile, and how soon the diagnostics settle once the typing stops.

  * hover during a storm: edits spread over many files at a steady rate, while hovers
    are asked, one after another, in a small file checked before the storm began;
    their latencies (a hover must never wait for another document's check);
  * typing storm: one file edited at a steady rate; from the last edit to the last
    diagnostics published for it, and whether any older version was published after
    a newer one (it never may).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bench import server_bench
from bench.generate import generate_source

SETTLE_WAIT_S = 3.0  # after the last edit's first publish, how long later publishes are awaited


@dataclass
class HoverFigures:
    files: int
    edits: int
    hovers: list[float]  # seconds each


@dataclass
class SettleFigures:
    edits: int
    rate: float
    first_publish_s: float  # last edit -> first diagnostics for its version
    settled_s: float  # last edit -> the last diagnostics published for its version
    stale_publishes: int  # publishes of a version older than one already published


def hover_during_storm(root: Path, data_dir: Path, files: int, lines: int, edits: int, rate: float) -> HoverFigures:
    session = server_bench.start_session(root, data_dir / "server-stderr-storm.log")
    try:
        quiet = data_dir / "storm_hovered.py"
        quiet_text = generate_source(200, variant=700)
        quiet.write_text(quiet_text, encoding="utf-8")
        server_bench.open_document(session, quiet, quiet_text)
        hover_at = server_bench.typing_position(quiet_text)
        hover(session, quiet, hover_at)  # its shapes are ready from then on
        paths = server_bench.open_generated(session, data_dir, "storm_", files, lines, first_variant=710)
        storm = threading.Thread(target=_edit_storm, args=(session, paths, edits, rate), daemon=True)
        storm.start()
        latencies = []
        while storm.is_alive():
            latencies.append(hover(session, quiet, hover_at))
            time.sleep(0.02)
        return HoverFigures(files, edits, latencies)
    finally:
        session.client.shutdown()


def hover(session: server_bench.ServerSession, path: Path, position: tuple[int, int]) -> float:
    started = time.perf_counter()
    answer = session.client.request("textDocument/hover", {
        "textDocument": {"uri": path.as_uri()}, "position": {"line": position[0], "character": position[1]},
    }, timeout=server_bench.WAIT_S)
    if "error" in answer.message:
        raise RuntimeError(f"hover failed: {answer.message['error']}")
    return answer.at - started


def _edit_storm(session: server_bench.ServerSession, paths: list[Path], edits: int, rate: float) -> None:
    positions = {path: server_bench.typing_position(session.documents[path.as_uri()].text) for path in paths}
    started = time.perf_counter()
    for edit in range(edits):
        path = paths[edit % len(paths)]
        line, character = positions[path]
        server_bench.send_one_character(session, path, line, character, insert=(edit // len(paths)) % 2 == 0)
        time.sleep(max(0.0, started + (edit + 1) / rate - time.perf_counter()))


def typing_storm(root: Path, data_dir: Path, lines: int, edits: int, rate: float,
                 env: dict[str, str] | None = None) -> SettleFigures:
    session = server_bench.start_session(root, data_dir / "server-stderr-typing.log", env=env)
    client = session.client
    try:
        path = data_dir / "typing_storm.py"
        text = generate_source(lines, variant=800)
        path.write_text(text, encoding="utf-8")
        server_bench.open_document(session, path, text)
        line, character = server_bench.typing_position(text)
        client.drain_notifications()
        started = time.perf_counter()
        for edit in range(edits):
            document, sent = server_bench.send_one_character(session, path, line, character, insert=edit % 2 == 0)
            time.sleep(max(0.0, started + (edit + 1) / rate - time.perf_counter()))
        published = []
        deadline = None
        while deadline is None or time.perf_counter() < deadline:
            try:
                received = client.wait_for_notification(
                    "textDocument/publishDiagnostics", lambda params: params.get("uri") == document.uri,
                    server_bench.WAIT_S if deadline is None else max(0.01, deadline - time.perf_counter()))
            except TimeoutError:
                break
            published.append(received)
            if received.message["params"].get("version") == document.version and deadline is None:
                deadline = time.perf_counter() + SETTLE_WAIT_S
        versions = [r.message["params"].get("version") for r in published]
        stale = sum(1 for index, version in enumerate(versions) if version < max(versions[:index + 1]))
        last = [r.at for r in published if r.message["params"].get("version") == document.version]
        return SettleFigures(edits, rate, last[0] - sent, last[-1] - sent, stale)
    finally:
        client.shutdown()
