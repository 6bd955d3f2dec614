"""The server goes away when told to, or when its client does, even in the middle of a
check or of a probe, and leaves no process behind (the probe worker included).

Driven over raw stdio (JSON-RPC framing written here), so that the test can close or
abandon the pipes the way a dying editor does.  How fast it goes is measured by the
benchmark (`python -m bench --only server`), not asserted here."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.lsp.lsp_session import SERVER_COMMAND
from tests.shapes.conftest import require_torch

REPO = Path(__file__).resolve().parent.parent
SAFETY_NET_S = 60.0  # against a hang only; the benchmark measures how quick the exit is


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream) -> dict | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return json.loads(stream.read(length))


class RawServer:
    def __init__(self, root: Path, settings: dict | None = None):
        self.process = subprocess.Popen(SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, cwd=root)
        self.settings = settings or {}
        self.next_id = 0
        self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(), "capabilities": {},
                                    "initializationOptions": self.settings})
        self.notify("initialized", {})

    def send(self, message: dict) -> None:
        self.process.stdin.write(frame(message))
        self.process.stdin.flush()

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = read_message(self.process.stdout)
            assert message is not None, f"the server closed its output before answering {method}"
            if message.get("id") == self.next_id and "method" not in message:
                return message

    def wait_for(self, method: str) -> dict:
        while True:
            message = read_message(self.process.stdout)
            assert message is not None, f"the server closed its output before sending {method}"
            if message.get("method") == method:
                return message

    def open(self, path: Path, text: str) -> None:
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": path.as_uri(), "languageId": "python", "version": 1, "text": text}})

    def descendants(self) -> set[int]:
        """Every process started by the server, children of children included (Linux)."""
        found, frontier = set(), [self.process.pid]
        while frontier:
            pid = frontier.pop()
            for task in Path(f"/proc/{pid}/task").glob("*"):
                try:
                    children = {int(c) for c in (task / "children").read_text().split()}
                except OSError:
                    continue
                frontier.extend(children - found)
                found |= children
        return found

    def exited(self) -> int:
        try:
            return self.process.wait(timeout=SAFETY_NET_S)
        finally:
            if self.process.poll() is None:
                self.process.kill()


def large_source(copies: int = 60) -> str:
    """Thousands of lines: long enough that a check is still running when the exit comes."""
    example = (REPO / "examples" / "cifar10_cnn.py").read_text(encoding="utf-8")
    return "\n".join(example.replace("def ", f"def copy{i}_").replace("class ", f"class Copy{i}")
                     for i in range(copies))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "State:\tZ" in status.read_text())


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_shutdown_and_exit_in_the_middle_of_a_check(tmp_path):
    server = RawServer(tmp_path)
    server.open(tmp_path / "large.py", large_source())
    time.sleep(0.2)  # the check has started
    server.request("shutdown", None)
    server.notify("exit", None)
    assert server.exited() == 0


def test_exit_without_shutdown_exits_with_1(tmp_path):
    server = RawServer(tmp_path)
    server.notify("exit", None)
    assert server.exited() == 1


def test_the_client_closing_stdin_in_the_middle_of_a_check_ends_the_server(tmp_path):
    server = RawServer(tmp_path)
    server.open(tmp_path / "large.py", large_source())
    time.sleep(0.2)
    server.process.stdin.close()
    assert server.exited() == 1


def test_a_killed_client_leaves_no_server_and_no_probe_worker(tmp_path):
    """The client vanishes (both pipes closed) while the probe runs a model that never
    returns: the server and the probe worker it started are gone."""
    require_torch()
    spin = ("import torch\nimport torch.nn as nn\n\n\nclass Spin(nn.Module):\n"
            "    def forward(self, x):\n        while True:\n            pass\n\n\n"
            "out = Spin()(torch.randn(2, 3))\n")
    settings = {"probe": {"enabled": True, "python": sys.executable, "timeout": 60}}
    server = RawServer(tmp_path, {"torch-lsp": settings})
    server.open(tmp_path / "spin.py", spin)
    deadline = time.monotonic() + SAFETY_NET_S
    while not server.descendants() and time.monotonic() < deadline:
        time.sleep(0.1)
    workers = server.descendants()
    assert workers, "the probe worker never started"
    time.sleep(1.0)  # the worker has imported torch and is running the model
    server.process.stdin.close()
    server.process.stdout.close()
    server.exited()
    deadline = time.monotonic() + SAFETY_NET_S
    while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(alive(pid) for pid in workers), "a probe worker outlived the server"
