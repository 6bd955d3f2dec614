"""Timings of the real language server over stdio: start-up, didOpen and didChange to
published diagnostics, and its memory once files are open.

The client declares no pull-diagnostics capability, so the server must push
`textDocument/publishDiagnostics`; a latency is the time from writing the
notification to reading the diagnostics published for that document version.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.lsp_client import LspClient, Received

SERVER_COMMAND = [sys.executable, "-m", "torch_lsp", "serve"]
WAIT_S = 60.0

CLIENT_CAPABILITIES = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        # No "diagnostic" entry: this client cannot pull, so the server pushes.
        "publishDiagnostics": {"versionSupport": True, "codeDescriptionSupport": True},
    },
    "workspace": {"configuration": False, "workspaceFolders": True},
}
# A client that pulls (`textDocument/diagnostic`): the server pushes nothing and answers
# each pull with every rule's findings, the shape rules' included.
PULL_CLIENT_CAPABILITIES = {
    **CLIENT_CAPABILITIES,
    "textDocument": {**CLIENT_CAPABILITIES["textDocument"], "diagnostic": {"dynamicRegistration": False}},
}

# A pull client that also supports `workspace/diagnostic/refresh`: its first pull is answered
# after every rule but the shape rules (a refresh follows when those add something).
REFRESH_CLIENT_CAPABILITIES = {
    **PULL_CLIENT_CAPABILITIES,
    "workspace": {**CLIENT_CAPABILITIES["workspace"], "diagnostics": {"refreshSupport": True}},
}


@dataclass
class OpenDocument:
    uri: str
    text: str
    version: int


@dataclass
class ServerSession:
    client: LspClient
    incremental_sync: bool
    startup_s: float
    documents: dict[str, OpenDocument] = field(default_factory=dict)


def start_session(root: Path, log_path: Path, pulls: bool = False, refreshes: bool = False,
                  env: dict[str, str] | None = None, command: list[str] | None = None) -> ServerSession:
    """Spawns the server (torch-lsp, or `command`; with `env` added to this process's
    environment) and completes the initialize handshake (as a pull client with `pulls`,
    one that also supports diagnostic refresh with `refreshes`)."""
    client = LspClient(command or SERVER_COMMAND, stderr_path=log_path, cwd=root, env={**os.environ, **(env or {})})
    try:
        response = client.request("initialize", _initialize_params(root, pulls, refreshes), timeout=WAIT_S)
    except Exception:
        client.shutdown(timeout=2)
        raise
    if "error" in response.message:
        client.shutdown(timeout=2)
        raise RuntimeError(f"the server answered initialize with an error: {response.message['error']}")
    client.notify("initialized", {})
    capabilities = response.message.get("result", {}).get("capabilities", {})
    return ServerSession(client, _is_incremental(capabilities), response.at - client.spawned_at)


def wait_until_serving(session: ServerSession) -> None:
    """Returns once the server answers a request beyond `initialize` (torch-lsp answers
    `initialize` while it is still loading)."""
    session.client.request("textDocument/hover", {"textDocument": {"uri": "file:///not-open.py"},
                                                  "position": {"line": 0, "character": 0}}, WAIT_S)


def _initialize_params(root: Path, pulls: bool = False, refreshes: bool = False) -> dict:
    return {
        "processId": None,
        "clientInfo": {"name": "torch-lsp-bench", "version": "1"},
        "rootUri": root.as_uri(),
        "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
        "capabilities": (REFRESH_CLIENT_CAPABILITIES if refreshes else PULL_CLIENT_CAPABILITIES) if pulls
        else CLIENT_CAPABILITIES,
    }


def _is_incremental(capabilities: dict) -> bool:
    sync = capabilities.get("textDocumentSync", 1)
    kind = sync.get("change", 1) if isinstance(sync, dict) else sync
    return kind == 2


def measure_startup(root: Path, log_path: Path, runs: int, command: list[str] | None = None) -> list[float]:
    """Seconds from spawning `python -m torch_lsp serve` (or `command`) to reading its initialize response."""
    samples = []
    for _ in range(runs):
        session = start_session(root, log_path, command=command)
        samples.append(session.startup_s)
        session.client.shutdown()
    return samples


def _diagnostics_for(uri: str, version: int):
    def matches(params: dict) -> bool:
        # A server that leaves out the version is matched on the document alone.
        return params.get("uri") == uri and params.get("version", version) == version
    return matches


def open_document(session: ServerSession, path: Path, text: str, timeout: float = WAIT_S) -> tuple[float, Received]:
    """didOpen; returns (latency in s, the publishDiagnostics notification)."""
    uri = path.as_uri()
    document = OpenDocument(uri, text, 1)
    session.documents[uri] = document
    session.client.drain_notifications()
    sent = session.client.notify("textDocument/didOpen", {
        "textDocument": {"uri": uri, "languageId": "python", "version": document.version, "text": text},
    })
    published = session.client.wait_for_notification(
        "textDocument/publishDiagnostics", _diagnostics_for(uri, document.version), timeout)
    return published.at - sent, published


def open_generated(session: ServerSession, data_dir: Path, names: str, count: int, lines: int,
                   first_variant: int) -> list[Path]:
    """Writes `count` generated files of `lines` lines (`names` + index) and opens each,
    waiting for its diagnostics; returns their paths."""
    from bench.generate import generate_source

    paths = []
    for index in range(count):
        path = data_dir / f"{names}{index}.py"
        text = generate_source(lines, variant=first_variant + index)
        path.write_text(text, encoding="utf-8")
        open_document(session, path, text)
        paths.append(path)
    return paths


def open_and_pull(session: ServerSession, path: Path, text: str) -> tuple[float, int]:
    """For a pull session: didOpen, then at once a `textDocument/diagnostic` request, whose
    answer holds every rule's findings, the shape rules' included (the first step only,
    without them, for a client that supports refresh); returns (latency in s from didOpen
    to that answer, number of diagnostics)."""
    uri = path.as_uri()
    session.documents[uri] = OpenDocument(uri, text, 1)
    session.client.drain_notifications()
    sent = session.client.notify("textDocument/didOpen", {
        "textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text},
    })
    answer = session.client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}}, WAIT_S)
    if "error" in answer.message:
        raise RuntimeError(f"textDocument/diagnostic failed: {answer.message['error']}")
    return answer.at - sent, len(answer.message["result"].get("items", []))


def pull_workspace(session: ServerSession, timeout: float = 10 * WAIT_S) -> dict[str, int]:
    """`workspace/diagnostic`, answered once every file of the folder is checked; the number
    of diagnostics reported per uri."""
    answer = session.client.request("workspace/diagnostic", {"previousResultIds": []}, timeout)
    if "error" in answer.message:
        raise RuntimeError(f"workspace/diagnostic failed: {answer.message['error']}")
    return {item["uri"]: len(item.get("items", [])) for item in answer.message["result"]["items"]}


def close_document(session: ServerSession, path: Path) -> None:
    uri = path.as_uri()
    session.client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    session.documents.pop(uri, None)


def type_one_character(session: ServerSession, path: Path, line: int, character: int, insert: bool,
                       timeout: float = WAIT_S) -> float:
    """Inserts (or deletes again) one character at (line, character); returns the latency in s."""
    session.client.drain_notifications()
    document, sent = send_one_character(session, path, line, character, insert)
    published = session.client.wait_for_notification(
        "textDocument/publishDiagnostics", _diagnostics_for(document.uri, document.version), timeout)
    return published.at - sent


def type_and_pull(session: ServerSession, path: Path, line: int, character: int, insert: bool) -> float:
    """For a pull session: inserts (or deletes again) one character, then at once asks for the
    document's diagnostics; returns the latency in s from the edit to the answer, which holds
    every rule's findings for the edited version (the shape rules' included)."""
    document, sent = send_one_character(session, path, line, character, insert)
    answer = session.client.request("textDocument/diagnostic", {"textDocument": {"uri": document.uri}}, WAIT_S)
    if "error" in answer.message:
        raise RuntimeError(f"textDocument/diagnostic failed: {answer.message['error']}")
    return answer.at - sent


def send_one_character(session: ServerSession, path: Path, line: int, character: int,
                       insert: bool) -> tuple[OpenDocument, float]:
    """Inserts (or deletes again) one character at (line, character), not waiting for
    anything; returns the document and when the change was sent."""
    document = session.documents[path.as_uri()]
    document.version += 1
    lines = document.text.split("\n")
    text_line = lines[line]
    if insert:
        lines[line] = text_line[:character] + "x" + text_line[character:]
        change = {"range": _range(line, character, line, character), "text": "x"}
    else:
        lines[line] = text_line[:character] + text_line[character + 1:]
        change = {"range": _range(line, character, line, character + 1), "text": ""}
    document.text = "\n".join(lines)
    if not session.incremental_sync:
        change = {"text": document.text}
    sent = session.client.notify("textDocument/didChange", {
        "textDocument": {"uri": document.uri, "version": document.version},
        "contentChanges": [change],
    })
    return document, sent


def _range(line: int, start: int, end_line: int, end: int) -> dict:
    return {"start": {"line": line, "character": start}, "end": {"line": end_line, "character": end}}


def resident_memory_mib(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MiB, read from /proc (Linux only)."""
    fields = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) / 1024
    return fields.get("VmRSS", float("nan")), fields.get("VmHWM", float("nan"))


def typing_position(text: str) -> tuple[int, int]:
    """A place in the middle of the file inside a string literal, where one more
    character keeps the file valid Python (as typing into a message would)."""
    lines = text.split("\n")
    middle = len(lines) // 2
    for offset in range(len(lines)):
        for index in (middle + offset, middle - offset):
            if 0 <= index < len(lines):
                column = lines[index].find('"')
                if column >= 0 and lines[index].count('"') >= 2 and '"""' not in lines[index] and "\\" not in lines[index]:
                    return index, column + 1
    return middle, 0


EXIT_WAYS = ("shutdown + exit", "stdin closed", "client killed")


def measure_exit(root: Path, log_path: Path, way: str, path: Path, text: str) -> float:
    """Seconds from the client's goodbye (`way`, one of EXIT_WAYS) to the server process's
    end, sent while the check of `text` (opened just before) is under way."""
    session = start_session(root, log_path)
    client = session.client
    try:
        wait_until_serving(session)  # a check of `text` is what it leaves during, not the start-up
        client.notify("textDocument/didOpen", {
            "textDocument": {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}})
        time.sleep(0.3)  # the check has started
        if way == "shutdown + exit":
            client.request("shutdown", None, timeout=WAIT_S)
            started = time.perf_counter()
            client.notify("exit", None)
        else:
            started = time.perf_counter()
            client.process.stdin.close()
            if way == "client killed":
                client.process.stdout.close()
        client.process.wait(timeout=WAIT_S)
        return time.perf_counter() - started
    finally:
        client.shutdown(timeout=1)
