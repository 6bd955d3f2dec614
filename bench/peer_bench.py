"""torch-lsp beside other Python language servers, measured the same way in one run:
ruff's server (`ruff server`) and jedi-language-server, where they are installed
(`pip install ruff jedi-language-server`; a server that is not is skipped, and the
table says so).

For each server, with the benchmark's push client (`server_bench`):
  * start -> `initialize` answered (median of several spawns);
  * didChange (one character typed in a 2,000-line file) -> diagnostics published for
    that version, for a server that publishes on change;
  * hover latency on names assigned in that file's functions (after one warm-up hover),
    for a server whose hover covers code (ruff's covers `# noqa` codes only);
  * RSS with 20 open 2,000-line documents after a run of edits spread over them.
A server that publishes nothing for a document is not waited for beyond `PEER_WAIT_S`.
"""
from __future__ import annotations

import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench import server_bench
from bench.generate import generate_source

PEER_WAIT_S = 15.0
HOVERS = 20
# Name, its executable and arguments, whether its hover covers code.
PEERS = [
    ("ruff server", "ruff", ["server"], False),
    ("jedi-language-server", "jedi-language-server", [], True),
]
_ASSIGNED_NAME = re.compile(r"^(\s+)([A-Za-z_]\w*) = ")


@dataclass
class ServerFigures:
    name: str
    startup_s: list[float] = field(default_factory=list)
    change_s: list[float] = field(default_factory=list)  # empty: it does not publish on change
    hover_s: list[float] = field(default_factory=list)  # empty: no hover on code
    rss_mib: float | None = None
    documents: int = 0
    edits: int = 0
    notes: list[str] = field(default_factory=list)


def peer_command(executable: str, arguments: list[str]) -> list[str] | None:
    """The command that starts a peer, from this Python's environment first, else PATH;
    None when it is not installed."""
    beside = Path(sys.executable).parent / executable
    found = str(beside) if beside.exists() else shutil.which(executable)
    return [found, *arguments] if found else None


def hover_positions(text: str, count: int) -> list[tuple[int, int]]:
    """(line, character) of names assigned inside functions, spread over the file."""
    positions = []
    for index, line in enumerate(text.split("\n")):
        found = _ASSIGNED_NAME.match(line)
        if found and len(found.group(1)) >= 8:  # inside a method or a function's block
            positions.append((index, len(found.group(1))))
    step = max(1, len(positions) // count)
    return positions[::step][:count]


def measure(name: str, command: list[str] | None, root: Path, data_dir: Path, startups: int, changes: int,
            documents: int, lines: int, edits: int, hovers_code: bool = True) -> ServerFigures:
    """One server's figures (torch-lsp's when `command` is None)."""
    figures = ServerFigures(name)
    log_path = data_dir / f"peer-{name.replace(' ', '-')}-stderr.log"
    figures.startup_s = server_bench.measure_startup(root, log_path, startups, command=command)
    session = server_bench.start_session(root, log_path, command=command)
    wait = server_bench.WAIT_S if command is None else PEER_WAIT_S
    try:
        path = data_dir / "peer_typing.py"
        text = generate_source(lines, variant=700)
        path.write_text(text, encoding="utf-8")
        publishes = _open(session, path, text, wait, figures)
        line, character = server_bench.typing_position(text)
        if publishes:
            try:
                figures.change_s = [server_bench.type_one_character(session, path, line, character, i % 2 == 0, wait)
                                    for i in range(changes)]
            except TimeoutError:
                figures.change_s = []
                figures.notes.append("no diagnostics published on change")
        if hovers_code:
            figures.hover_s = _hovers(session, path, session.documents[path.as_uri()].text)
        else:
            figures.notes.append("hover only on `# noqa` codes")
        server_bench.close_document(session, path)
        paths = []
        for index in range(documents):
            path = data_dir / f"peer_memory_{index}.py"
            text = generate_source(lines, variant=800 + index)
            path.write_text(text, encoding="utf-8")
            _open(session, path, text, wait if publishes else 0.0, figures)
            paths.append(path)
        _edit(session, paths, edits, wait if publishes else 0.0)
        time.sleep(1.0)
        figures.rss_mib, _ = server_bench.resident_memory_mib(session.client.process.pid)
        figures.documents, figures.edits = documents, edits
    finally:
        session.client.shutdown()
    return figures


def _open(session: server_bench.ServerSession, path: Path, text: str, wait: float, figures: ServerFigures) -> bool:
    """didOpen, waiting for its diagnostics up to `wait` s; whether they came."""
    if wait <= 0:
        uri = path.as_uri()
        session.documents[uri] = server_bench.OpenDocument(uri, text, 1)
        session.client.notify("textDocument/didOpen", {
            "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        return False
    try:
        server_bench.open_document(session, path, text, timeout=wait)
        return True
    except TimeoutError:
        if "no diagnostics published on open" not in figures.notes:
            figures.notes.append("no diagnostics published on open")
        return False


def _edit(session: server_bench.ServerSession, paths: list[Path], edits: int, wait: float) -> None:
    """One character typed (then deleted) at a time, round robin over `paths`, each
    waiting for its diagnostics when the server publishes them."""
    positions = {path: server_bench.typing_position(session.documents[path.as_uri()].text) for path in paths}
    for edit in range(edits):
        path = paths[edit % len(paths)]
        line, character = positions[path]
        insert = (edit // len(paths)) % 2 == 0
        if wait > 0:
            server_bench.type_one_character(session, path, line, character, insert, wait)
        else:
            server_bench.send_one_character(session, path, line, character, insert)


def _hovers(session: server_bench.ServerSession, path: Path, text: str) -> list[float]:
    uri = path.as_uri()
    positions = hover_positions(text, HOVERS)
    samples = []
    for index, (line, character) in enumerate([positions[0], *positions]):
        started = time.perf_counter()
        answer = session.client.request("textDocument/hover", {
            "textDocument": {"uri": uri}, "position": {"line": line, "character": character}}, server_bench.WAIT_S)
        if "error" in answer.message:
            raise RuntimeError(f"hover failed: {answer.message['error']}")
        if index > 0:  # the first is a warm-up
            samples.append(answer.at - started)
    return samples
