"""A minimal LSP client over stdio: just enough JSON-RPC to time a real server.

The benchmark talks to `python -m torch_lsp serve` directly (no pytest-lsp, no pygls on
the client side) so that what it measures is the server, not a client framework.
A reader thread stamps every message with the moment its last byte arrived; the
timings are taken from those stamps.
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Received:
    message: dict
    at: float  # time.perf_counter() when the whole message had been read


class ServerExited(RuntimeError):
    pass


def server_env(env: dict[str, str] | None) -> dict[str, str]:
    """`env` (default: this environment), with bytecode caching allowed: an installed
    server starts from compiled modules, and a shell with PYTHONDONTWRITEBYTECODE would
    otherwise time every start compiling them all again."""
    return {name: value for name, value in (os.environ if env is None else env).items()
            if name != "PYTHONDONTWRITEBYTECODE"}


class LspClient:
    """Spawns a language server and exchanges LSP messages with it over its stdin/stdout."""

    def __init__(self, command: list[str], stderr_path: Path, cwd: Path | None = None,
                 env: dict[str, str] | None = None):
        self._stderr = open(stderr_path, "wb")
        self.spawned_at = time.perf_counter()
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, cwd=cwd,
            env=server_env(env)
        )
        self._write_lock = threading.Lock()
        self._next_id = 0
        self._responses: dict[int, Received] = {}
        self._responses_changed = threading.Condition()
        self.notifications: "queue.Queue[Received]" = queue.Queue()
        self._reader = threading.Thread(target=self._read_forever, name="lsp-reader", daemon=True)
        self._reader.start()

    # -- sending ---------------------------------------------------------------
    def _send(self, message: dict) -> float:
        body = json.dumps(message).encode("utf-8")
        frame = b"Content-Length: %d\r\n\r\n" % len(body) + body
        with self._write_lock:
            sent_at = time.perf_counter()
            self.process.stdin.write(frame)
            self.process.stdin.flush()
        return sent_at

    def notify(self, method: str, params: dict | None) -> float:
        """Sends a notification; returns the moment it was written."""
        return self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict | None, timeout: float) -> Received:
        """Sends a request and waits for its response (raises TimeoutError after `timeout` s)."""
        self._next_id += 1
        request_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.perf_counter() + timeout
        with self._responses_changed:
            while request_id not in self._responses:
                left = deadline - time.perf_counter()
                if left <= 0:
                    raise TimeoutError(f"no response to {method} within {timeout:.0f} s")
                if self.process.poll() is not None and not self._reader.is_alive():
                    raise ServerExited(f"the server exited (code {self.process.returncode}) during {method}")
                self._responses_changed.wait(min(left, 0.5))
            return self._responses.pop(request_id)

    # -- receiving -------------------------------------------------------------
    def _read_forever(self) -> None:
        stream = self.process.stdout
        try:
            while True:
                message = self._read_one(stream)
                if message is None:
                    break
                self._dispatch(Received(message, time.perf_counter()))
        finally:
            with self._responses_changed:
                self._responses_changed.notify_all()

    @staticmethod
    def _read_one(stream) -> dict | None:
        length = None
        while True:
            line = stream.readline()
            if not line:
                return None
            line = line.strip()
            if not line:
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        if length is None:
            return None
        return json.loads(stream.read(length))

    def _dispatch(self, received: Received) -> None:
        message = received.message
        if "id" in message and "method" in message:
            self._answer_server_request(message)
        elif "id" in message:
            with self._responses_changed:
                self._responses[message["id"]] = received
                self._responses_changed.notify_all()
        else:
            self.notifications.put(received)

    def _answer_server_request(self, message: dict) -> None:
        # workspace/configuration gets one empty settings object per item (= defaults);
        # registrations, progress creation and the rest just need a null result.
        result = None
        if message["method"] == "workspace/configuration":
            result = [{} for _ in message.get("params", {}).get("items", [])]
        self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def wait_for_notification(self, method: str, predicate, timeout: float) -> Received:
        """The first notification `method` whose params satisfy `predicate` (others are dropped)."""
        deadline = time.perf_counter() + timeout
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError(f"no matching {method} within {timeout:.0f} s")
            try:
                received = self.notifications.get(timeout=min(left, 0.5))
            except queue.Empty:
                if self.process.poll() is not None:
                    raise ServerExited(f"the server exited (code {self.process.returncode}) while "
                                       f"waiting for {method}") from None
                continue
            if received.message.get("method") == method and predicate(received.message.get("params") or {}):
                return received

    def drain_notifications(self) -> None:
        while True:
            try:
                self.notifications.get_nowait()
            except queue.Empty:
                return

    # -- lifetime --------------------------------------------------------------
    def shutdown(self, timeout: float = 10.0) -> None:
        """Polite LSP shutdown/exit, then a kill if the server does not go."""
        try:
            if self.process.poll() is None and not self.process.stdin.closed:
                self.request("shutdown", None, timeout=timeout)
                self.notify("exit", None)
                self.process.wait(timeout=timeout)
        except (TimeoutError, ServerExited, OSError, ValueError, subprocess.TimeoutExpired):
            pass
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            self._stderr.close()
