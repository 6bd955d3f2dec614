"""`torch-lsp serve`: `initialize` answered before the language server has loaded.

Loading the server (pygls, lsprotocol's thousand attrs classes, the checker) takes
most of a second, and more on a busy machine; an editor waits for the `initialize`
answer before it sends anything else.  So this module, which imports only the
standard library, starts that import on a thread, reads the client's stream itself,
and answers the `initialize` request from `initialize_result` (plain JSON that tests
keep equal to pygls' answer).  When the import is done it hands the stream over
(`lsp.serve_stdio`): pygls gets the initialize request too, so client capabilities,
the position encoding, workspace folders and settings are known exactly as if it had
answered it (its own answer is dropped), then every message that arrived meanwhile,
in order, then the rest of the stream.  Nothing is answered twice, nothing is lost.
"""
from __future__ import annotations

import importlib
import json
import logging
import os
import sys
import threading
from typing import BinaryIO

from torch_lsp.initialize_result import can_answer, initialize_result
from torch_lsp.message_framing import ClientStream, StdinChunks, framed

# "0" leaves `initialize` to pygls (tests compare the two answers).
EARLY_INITIALIZE_ENV = "TORCH_LSP_EARLY_INITIALIZE"
GIL_SWITCH_INTERVAL_S = 0.001  # Python's default is 5 ms

log = logging.getLogger(__name__)


class ServerImport:
    """`torch_lsp.lsp`, imported on a thread; `chunks.wake()` when it is done."""

    def __init__(self, chunks: StdinChunks) -> None:
        self.module = None
        self.error: BaseException | None = None
        self.done = False
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
    # shorter one lets a hover (request thread) or a message (event loop) in sooner, and,
    # at start-up, lets the initialize answer past the import thread.
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    stream = ClientStream(StdinChunks(sys.stdin.buffer))
    server = ServerImport(stream.chunks)
    answer_early = os.environ.get(EARLY_INITIALIZE_ENV, "1") != "0"
    answered = read_until_loaded(stream, server, sys.stdout.buffer if answer_early else None)
    return server.result().serve_stdio(stream, answered)


def read_until_loaded(stream: ClientStream, server: ServerImport, stdout: BinaryIO | None) -> dict:
    """Cut the client's messages into `stream.bodies` until the server has loaded and the
    first message came (or the stream ended); the first, if it is `initialize`, is
    answered on `stdout` (unless None).  Returns {request id: result} of what was answered."""
    answered: dict = {}
    first_seen = loaded = False
    while not (loaded and (first_seen or stream.ended)):
        chunk = stream.chunks.get()
        if chunk is None:
            loaded = True
        elif not chunk:
            stream.ended = True
        else:
            for body in stream.framer.feed(chunk):
                if not first_seen and stdout is not None:
                    answered = answer_initialize(body, stdout)
                first_seen = True
                stream.bodies.append(body)
    return answered


def answer_initialize(body: bytes, stdout: BinaryIO) -> dict:
    """Answer `body` if it is an `initialize` request pygls would accept as it is."""
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
