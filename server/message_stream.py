"""The JSON-RPC byte stream between the client and the server: framing in, errors out.

pygls' own reader matches `Content-Length: N\\r\\n` exactly and starts a body only at a
`\\r\\n` blank line, so one malformed header (`content-length:` in lower case, LF-only
lines, a Content-Length too small or too large) left it deaf until a stray newline
came; and a request whose parameters do not fit the protocol's types was logged and
never answered.  Here:

- headers are read leniently (any case, `\\n` or `\\r\\n`), a Content-Length that is
  wrong is noticed (the body does not parse, or the next header shows up inside it)
  and the stream resynchronises on the next `Content-Length` header;
- a body that cannot be read is answered with `-32700 Parse error` (id null), a request
  whose parameters do not fit with `-32602 Invalid params` naming the field;
- after `shutdown`, requests are answered `-32600 Invalid request`, and `exit` ends
  the process with 0 after `shutdown`, 1 without.

Bytes are read on a daemon thread of their own, so a blocked read never holds up exit.
"""
from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import threading
from typing import BinaryIO, Iterator

from cattrs import transform_error
from cattrs.v import format_exception
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol

log = logging.getLogger(__name__)

READ_CHUNK_BYTES = 1 << 16
# A header block longer than this without a blank line is noise, not headers.
MAX_HEADER_BYTES = 1 << 16
MAX_HEADER_LINE = 64
MAX_FIELD_ERRORS_SHOWN = 3
EXIT_AFTER_SHUTDOWN = 0
EXIT_WITHOUT_SHUTDOWN = 1

_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
_HEADER_END = re.compile(rb"\r?\n\r?\n")
# A Content-Length header line inside what should be a body: the declared length ran
# into the next message (a raw line break cannot occur inside a JSON string).
_HEADER_LINE_IN_BODY = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)


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


# ------------------------------------------------------------------ protocol
class TorchProtocol(LanguageServerProtocol):
    """pygls' LSP protocol, answering what it would drop (see the module docstring)."""

    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self.shutdown_received = False

    def receive_body(self, body: bytes) -> None:
        """Decode one message body and handle it; answer when it cannot be."""
        try:
            data = json.loads(body.decode("utf-8", errors="replace"))
        except ValueError as error:
            log.error("a message from the client is not JSON (%s); answering Parse error", error)
            self.send_error(None, JsonRpcParseError(f"The message is not valid JSON: {error}."))
            return
        if not isinstance(data, dict):
            self.send_error(None, JsonRpcInvalidRequest("A message must be a JSON object."))
            return
        try:
            message = self.structure_message(data)
        except JsonRpcException as error:
            self.answer_unreadable(data, error)
            return
        self.handle_message(message)

    def answer_unreadable(self, data: dict, error: JsonRpcException) -> None:
        """A request whose parameters do not fit its type gets Invalid params, naming the
        field; a notification cannot be answered, so it is only logged."""
        method = data.get("method")
        cause = error.__cause__
        fields = transform_error(cause, format_exception=_field_error) if hasattr(cause, "exceptions") else []
        detail = "; ".join(fields[:MAX_FIELD_ERRORS_SHOWN]) or str(cause or error)
        if "id" not in data or not isinstance(method, str):
            log.error("ignored a message with parameters that do not fit %r: %s", method, detail)
            return
        self.send_error(data["id"], JsonRpcInvalidParams(f"Invalid params for {method}: {detail}."))

    def handle_message(self, message) -> None:
        method = getattr(message, "method", None)
        if self.shutdown_received and method != lsp.EXIT:
            if getattr(message, "id", None) is not None and method is not None:
                self.send_error(message.id, JsonRpcInvalidRequest(f"The server is shut down; {method} is refused."))
            return
        if method == lsp.SHUTDOWN:
            self.shutdown_received = True
        super().handle_message(message)

    def send_error(self, msg_id, error: JsonRpcException) -> None:
        self._send_response(msg_id, None, error.to_response_error())


def _field_error(error: BaseException, expected: type | None) -> str:
    """cattrs' wording, with the validator's own sentence where it has one ("Position.line
    should be in range [0:2147483647], but was -1.")."""
    if type(error) is ValueError and str(error):
        return f"invalid value ({error})"
    return format_exception(error, expected)


# ------------------------------------------------------------------ serving
def serve_stream(protocol: TorchProtocol, stdin: BinaryIO, stdout: BinaryIO) -> int:
    """Serve until `exit` or the end of `stdin`; the exit code the process should end with."""
    protocol.set_writer(StdoutWriter(stdout))
    return asyncio.run(_serve(protocol, stdin))


async def _serve(protocol: TorchProtocol, stdin: BinaryIO) -> int:
    loop = asyncio.get_running_loop()
    chunks: asyncio.Queue[bytes] = asyncio.Queue()
    threading.Thread(target=_read_chunks, args=(stdin, loop, chunks), name="torch-lsp-stdin", daemon=True).start()
    framer = MessageFramer()
    while True:
        chunk = await chunks.get()
        if not chunk:
            # The client closed the stream: a normal end only after `shutdown`.
            return EXIT_AFTER_SHUTDOWN if protocol.shutdown_received else EXIT_WITHOUT_SHUTDOWN
        for body in framer.feed(chunk):
            try:
                protocol.receive_body(body)
            except SystemExit:  # pygls' `exit` handler
                return EXIT_AFTER_SHUTDOWN if protocol.shutdown_received else EXIT_WITHOUT_SHUTDOWN
            except Exception:
                log.exception("a message from the client could not be handled")


def _read_chunks(stdin: BinaryIO, loop: asyncio.AbstractEventLoop, chunks: asyncio.Queue) -> None:
    descriptor = stdin.fileno()
    while True:
        try:
            chunk = os.read(descriptor, READ_CHUNK_BYTES)
        except OSError:
            chunk = b""
        try:
            loop.call_soon_threadsafe(chunks.put_nowait, chunk)
        except RuntimeError:
            return  # the loop has closed
        if not chunk:
            return
