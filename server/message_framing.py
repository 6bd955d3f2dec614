"""The client's byte stream, before any LSP library is loaded: reading it and cutting it
into message bodies.

`StdinChunks` reads stdin on a daemon thread of its own (a blocked read never holds up
exit) from the moment the server starts: first into a plain queue, read by the start-up
path (`startup`) while pygls and lsprotocol still import, then, once the event loop
runs, straight into the loop's queue, with nothing lost or reordered in between.

`MessageFramer` cuts bodies out of those bytes.  Headers are read leniently (any case,
`\\n` or `\\r\\n`), and a Content-Length that is wrong is noticed (the next header shows up
inside the body) and the stream resynchronises on the next `Content-Length` header.
pygls' own reader matched `Content-Length: N\\r\\n` exactly, so one malformed header left
it deaf until a stray newline came.

Only the standard library is imported here, and not asyncio (100 ms on a busy machine)
until the server runs, so that the start-up path stays fast.
"""
from __future__ import annotations

import logging
import os
import queue
import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, BinaryIO, Callable, Iterator

if TYPE_CHECKING:
    import asyncio  # imported by the server, after start-up

log = logging.getLogger(__name__)

READ_CHUNK_BYTES = 1 << 16
# A header block longer than this without a blank line is noise, not headers.
MAX_HEADER_BYTES = 1 << 16
MAX_HEADER_LINE = 64

_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
_HEADER_END = re.compile(rb"\r?\n\r?\n")
# A Content-Length header line inside what should be a body: the declared length ran
# into the next message (a raw line break cannot occur inside a JSON string).
_HEADER_LINE_IN_BODY = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)
EXIT_AFTER_SHUTDOWN = 0
EXIT_WITHOUT_SHUTDOWN = 1
# What pygls writes before each body; the start-up path writes the same.
CONTENT_TYPE = "application/vscode-jsonrpc; charset=utf-8"


def framed(body: bytes) -> bytes:
    """One message as it goes on the wire."""
    return b"Content-Length: %d\r\nContent-Type: %s\r\n\r\n" % (len(body), CONTENT_TYPE.encode()) + body


# ------------------------------------------------------------------ reading
class StdinChunks:
    """The bytes of `stream`, read on a daemon thread, in order; an empty chunk is the end.

    Until `to_loop` they wait in a plain queue (`get`); from then on they go to the
    event loop's queue, the ones still waiting first."""

    def __init__(self, stream: BinaryIO) -> None:
        self._early: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._lock = threading.Lock()  # so that no chunk passes one still waiting in the early queue
        self._deliver: Callable[[bytes], None] = self._early.put
        threading.Thread(target=self._read, args=(stream.fileno(),), name="torch-lsp-stdin", daemon=True).start()

    def get(self, timeout: float | None = None) -> bytes | None:
        """The next chunk, before `to_loop`; None when `wake` was called.  Raises
        `queue.Empty` after `timeout` s."""
        return self._early.get(timeout=timeout)

    def wake(self) -> None:
        """Make a `get` waiting now (or the next one) return None."""
        self._early.put(None)

    def to_loop(self, loop: asyncio.AbstractEventLoop) -> asyncio.Queue[bytes]:
        """From now on, chunks go to the returned queue of the running `loop`."""
        import asyncio

        chunks: asyncio.Queue[bytes] = asyncio.Queue()
        with self._lock:
            while True:
                try:
                    chunk = self._early.get_nowait()
                except queue.Empty:
                    break
                if chunk is not None:
                    chunks.put_nowait(chunk)
            self._deliver = lambda chunk: loop.call_soon_threadsafe(chunks.put_nowait, chunk)
        return chunks

    def _read(self, descriptor: int) -> None:
        while True:
            try:
                chunk = os.read(descriptor, READ_CHUNK_BYTES)
            except OSError:
                chunk = b""
            with self._lock:
                try:
                    self._deliver(chunk)
                except RuntimeError:
                    return  # the loop has closed
            if not chunk:
                return


# ------------------------------------------------------------------ framing
class MessageFramer:
    """Cuts JSON-RPC message bodies out of the bytes received so far (`feed`), and
    resynchronises on the next Content-Length header when a header or length is wrong."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.skipped_bytes = 0  # bytes dropped while resynchronising, for the log
        self.scanned = 0  # how far the body being received was searched for a header line

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The complete bodies now available (the rest waits for more bytes)."""
        self.buffer += data
        while True:
            body = self._next_body()
            if body is None:
                return
            yield body

    def _next_body(self) -> bytes | None:
        while True:
            end = _HEADER_END.search(self.buffer)
            if end is None:
                if len(self.buffer) > MAX_HEADER_BYTES:
                    self._skip(len(self.buffer) - len(b"Content-Length: "))  # keep a header cut in two
                return None
            headers = bytes(self.buffer[: end.start()])
            lengths = list(_CONTENT_LENGTH.finditer(headers))
            if lengths:
                break
            self._skip(end.end())  # a block without a length: drop it, read the next
        length = int(lengths[-1].group(1))  # the last one: junk before it is a previous body's tail
        start = end.end()
        early_header = self._header_line_in(start, max(start, self.scanned), start + length)
        if early_header is not None:
            length = early_header.start() - start  # too large: the body ends where the next header starts
        elif len(self.buffer) < start + length:
            self.scanned = len(self.buffer)
            return None
        body = bytes(self.buffer[start : start + length])
        del self.buffer[: start + length]
        self.scanned = 0
        return body

    def _header_line_in(self, body: int, begin: int, end: int) -> re.Match | None:
        """A Content-Length header line in the body that starts at `body`, ending in
        `buffer[begin:end]`.  Only what arrived since the last look is searched, and only
        around raw line breaks, which a compact JSON body has none of."""
        newline = self.buffer.find(b"\n", begin, end)
        while newline != -1:
            found = _HEADER_LINE_IN_BODY.search(self.buffer, max(body, newline - MAX_HEADER_LINE), newline + 1)
            if found is not None:
                return found
            newline = self.buffer.find(b"\n", newline + 1, end)
        return None

    def _skip(self, count: int) -> None:
        self.skipped_bytes += count
        self.scanned = 0
        del self.buffer[:count]
        log.warning("skipped %d bytes of the client's stream that were not a message header", count)


@dataclass
class ClientStream:
    """The client's stream as the start-up path hands it to the server: the reader, the
    framer with any partial message, the bodies cut but not handled yet, and whether
    the client already closed the stream."""
    chunks: StdinChunks
    framer: MessageFramer = field(default_factory=MessageFramer)
    bodies: list[bytes] = field(default_factory=list)
    ended: bool = False
