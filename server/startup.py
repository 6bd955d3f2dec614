"""`torch-lsp serve`: `initialize` answered before the language server has loaded.

Loading the server (pygls, lsprotocol's thousand attrs classes, the checker) takes
most of a second, and more on a busy machine; an editor waits for the `initialize`
answer before it sends anything else.  So this module, which imports only the
standard library, reads the client's stream itself, answers the `initialize` request
from `initialize_result` (plain JSON that tests keep equal to pygls' answer), and
imports the server on a thread meanwhile.  When the import is done it hands the stream
over (`lsp.serve_stdio`): pygls gets the initialize request too, so client capabilities,
the position encoding, workspace folders and settings are known exactly as if it had
answered it (its own answer is dropped), then every message that arrived meanwhile,
in order, then the rest of the stream.  Nothing is answered twice, nothing is lost.
A client that leaves without `shutdown` while the server loads (closing the stream, or
`exit`) ends the process at once, with 1, as it would later.
"""
from __future__ import annotations

import importlib
import json
import logging
import os
import queue
import sys
import threading
import time
from typing import BinaryIO

from torch_lsp.initialize_result import can_answer, initialize_result
from torch_lsp.message_framing import EXIT_WITHOUT_SHUTDOWN, ClientStream, StdinChunks, framed

# "0" leaves `initialize` to pygls (tests compare the two answers).
EARLY_INITIALIZE_ENV = "TORCH_LSP_EARLY_INITIALIZE"
GIL_SWITCH_INTERVAL_S = 0.001  # Python's default is 5 ms
FIRST_MESSAGE_WAIT_S = 0.1


class ServerImport:
    """`torch_lsp.lsp`, imported on a thread; `chunks.wake()` when it is done."""

    def __init__(self, chunks: StdinChunks) -> None:
        self.module = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._load, args=(chunks,), name="torch-lsp-import", daemon=True)
        self._thread.start()

    def _load(self, chunks: StdinChunks) -> None:
        try:
            self.module = importlib.import_module("torch_lsp.lsp")
        except BaseException as error:  # re-raised on the main thread
            self.error = error
        finally:
            chunks.wake()

    def result(self):
        self._thread.join()
        if self.error is not None:
            raise self.error
        return self.module


def serve_stdio() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="torch-lsp: %(levelname)s %(message)s")
    # Checks run on threads of their own and hold the GIL but for the switch interval: a
    # shorter one lets a hover (request thread) or a message (event loop) in sooner.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    answer_early = os.environ.get(EARLY_INITIALIZE_ENV, "1") != "0"
    reader = EarlyReader(ClientStream(StdinChunks(sys.stdin.buffer)), sys.stdout.buffer if answer_early else None)
    # The client's `initialize` is usually in the pipe before this interpreter has started:
    # answered before the import begins, it never waits for a busy machine to switch
    # threads.  A client slower than that is answered while the import runs.
    reader.read_first(FIRST_MESSAGE_WAIT_S)
    if reader.left_without_shutdown():
        leave(EXIT_WITHOUT_SHUTDOWN)
    server = ServerImport(reader.stream.chunks)
    if not reader.read_until_loaded():
        leave(EXIT_WITHOUT_SHUTDOWN)
    return server.result().serve_stdio(reader.stream, reader.answered)


def leave(code: int) -> None:
    """End the process now: the client left without `shutdown` before the server had
    loaded, so nothing waits for an answer; the import thread is not waited for."""
    for output in (sys.stdout, sys.stderr):
        try:
            output.flush()
        except (ValueError, OSError):
            pass
    os._exit(code)


class EarlyReader:
    """The client's stream while the server loads: messages cut into `stream.bodies`, the
    first answered on `stdout` (unless None) if it is `initialize`."""

    def __init__(self, stream: ClientStream, stdout: BinaryIO | None) -> None:
        self.stream = stream
        self.stdout = stdout
        self.answered: dict = {}  # {request id: result} of what was answered here
        self.goodbyes: set[str] = set()  # `shutdown`, `exit`: which of them came

    def read_first(self, wait_s: float) -> None:
        """Read until the first message came (and was answered), the stream ended, or `wait_s` passed."""
        deadline = time.monotonic() + wait_s
        while not self.stream.bodies and not self.stream.ended:
            try:
                chunk = self.stream.chunks.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                return
            self._take(chunk)

    def read_until_loaded(self) -> bool:
        """Read until the server has loaded (`StdinChunks.wake`) and the first message came
        or the stream ended; False, without waiting for the server, when the client left
        (the stream or an `exit` notification) without asking for `shutdown`."""
        loaded = False
        while not (loaded and (self.stream.bodies or self.stream.ended)):
            chunk = self.stream.chunks.get()
            if chunk is None:
                loaded = True
            else:
                self._take(chunk)
                if self.left_without_shutdown():
                    return False
        return True

    def left_without_shutdown(self) -> bool:
        """The client closed the stream or said `exit`, and asked for no `shutdown` first:
        the process ends with 1 whatever else it sent."""
        if "shutdown" in self.goodbyes:
            return False
        return self.stream.ended or "exit" in self.goodbyes

    def _take(self, chunk: bytes) -> None:
        if not chunk:
            self.stream.ended = True
            return
        for body in self.stream.framer.feed(chunk):
            if not self.stream.bodies and self.stdout is not None:
                self.answered = answer_initialize(body, self.stdout)
            self.stream.bodies.append(body)
            method = _method_of(body)
            if method in ("shutdown", "exit"):
                self.goodbyes.add(method)


def _method_of(body: bytes) -> str | None:
    """The method of a request or notification body (None when it has none, or is not JSON)."""
    if b"shutdown" not in body and b"exit" not in body:
        return None  # the common case, without parsing
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


def answer_initialize(body: bytes, stdout: BinaryIO) -> dict:
    """Answer `body` if it is an `initialize` request pygls would accept as it is;
    {request id: result} of the answer."""
    try:
        message = json.loads(body)
    except ValueError:
        return {}
    if not isinstance(message, dict) or message.get("method") != "initialize" or not can_answer(message.get("params")):
        return {}
    request_id = message.get("id")
    if type(request_id) not in (int, str):
        return {}
    result = initialize_result(message["params"])
    stdout.write(framed(json.dumps({"id": request_id, "jsonrpc": "2.0", "result": result}).encode("utf-8")))
    stdout.flush()
    return {request_id: result}
