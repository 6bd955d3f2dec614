"""The real `torch-lsp serve` process driven byte by byte, for what a well-behaved
client library cannot send: malformed headers, invalid parameters, requests after
`shutdown`, `exit` without `shutdown`.

Replies are read by a thread of our own (written here, not taken from the server), so
a server that stops answering makes a test fail after `WAIT_S`, never hang."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

SERVER_COMMAND = [sys.executable, "-m", "torch_lsp", "serve"]
WAIT_S = 30.0  # a safety net against a deaf server, never a performance assertion


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    """A server process, the messages it sent, and a way to write any bytes to it."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env={**os.environ, **env} if env else None)
        self.messages: list[dict] = []  # everything the server sent, in order
        self.stderr = b""
        threading.Thread(target=self._read_messages, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stderr(self) -> None:
        self.stderr = self.process.stderr.read()

    def _read_messages(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if not line.strip():
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            self.messages.append(json.loads(stream.read(length)))

    # -- writing
    def send_bytes(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        self.send_bytes(frame(message))

    def request(self, request_id, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    # -- reading
    def wait_for(self, found, what: str) -> dict:
        """The first message the server sent for which `found(message)` holds."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            for message in list(self.messages):
                if found(message):
                    return message
            time.sleep(0.01)
        raise AssertionError(f"no {what} within {WAIT_S} s")

    def reply_to(self, request_id) -> dict:
        """The response to `request_id` (requests and notifications from the server are skipped)."""
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m,
                             f"reply to request {request_id!r}")

    def published(self, uri: str) -> dict:
        """The first diagnostics published for `uri`."""
        return self.wait_for(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                             and m["params"]["uri"] == uri, f"diagnostics for {uri}")

    def initialize(self, root_uri: str | None = None) -> dict:
        self.request(0, "initialize", {"processId": None, "rootUri": root_uri, "capabilities": {}})
        reply = self.reply_to(0)
        self.notify("initialized", {})
        return reply

    def exit_code(self) -> int:
        return self.process.wait(timeout=WAIT_S)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
