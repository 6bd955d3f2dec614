"""The JSON-RPC stream between the client and pygls: bodies in (cut by
`message_framing`, which resynchronises after a malformed header), errors out.

A request whose parameters do not fit the protocol's types was logged by pygls and
never answered.  Here:

- a body that cannot be read is answered with `-32700 Parse error` (id null), a request
  whose parameters do not fit with `-32602 Invalid params` naming the field;
- after `shutdown`, requests are answered `-32600 Invalid request`, and `exit` ends
  the process with 0 after `shutdown`, 1 without;
- a handler that has finished is forgotten: pygls keeps the future of every handler it
  runs (by message id, for `$/cancelRequest`) and drops it only when it answers a
  request, so a notification's (a uuid of its own, never answered) stayed for the
  server's lifetime: one per keystroke, about 2 MiB over 1,000 edits.

The stream comes from the start-up path (`startup`), which may already have answered
`initialize` and cut bodies that arrived meanwhile: pygls handles those first, the
initialize request included (its own answer to that is dropped), then the rest.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import BinaryIO

from cattrs import transform_error
from cattrs.v import format_exception
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.io_ import StdoutWriter
from pygls.protocol import LanguageServerProtocol

from torch_lsp.message_framing import EXIT_AFTER_SHUTDOWN, EXIT_WITHOUT_SHUTDOWN, ClientStream

log = logging.getLogger(__name__)

MAX_FIELD_ERRORS_SHOWN = 3
# What the server sends on its own (`build_converters`).
SENT = (lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, lsp.WINDOW_LOG_MESSAGE, lsp.WINDOW_SHOW_MESSAGE,
        lsp.WORKSPACE_DIAGNOSTIC_REFRESH, lsp.WORKSPACE_INLAY_HINT_REFRESH, lsp.PROGRESS)
_NOT_ANSWERED = object()


# ------------------------------------------------------------------ protocol
class TorchProtocol(LanguageServerProtocol):
    """pygls' LSP protocol, answering what it would drop (see the module docstring)."""

    def __init__(self, server, converter) -> None:
        super().__init__(server, converter)
        self.shutdown_received = False
        # Requests the start-up path answered already (the `initialize` request): id -> result.
        self.answered_early: dict = {}

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

    def build_converters(self) -> None:
        """Have cattrs build its converters for every message this server reads, and for
        what it sends, now (it builds one on the first message of each type)."""
        for method in {*self.fm.builtin_features, *self.fm.features, *SENT}:
            message_type, result_type = lsp.METHOD_TO_TYPES.get(method, (None, None))[:2]
            if message_type is not None:
                self._converter.get_structure_hook(message_type)
                self._converter.get_unstructure_hook(message_type)
            if result_type is not None:
                self._converter.get_unstructure_hook(result_type)

    def _execute_handler(self, msg_id, handler, callback, args=None, kwargs=None):
        self._forget_finished_handlers()
        super()._execute_handler(msg_id, handler, callback, args, kwargs)

    def _forget_finished_handlers(self) -> None:
        """Drop the futures of handlers that are done (see the module docstring): what is
        left is what can still be cancelled.  Done here, before the next handler runs, not
        in a done callback: pygls' `shutdown` cancels the futures while it walks the map,
        and a concurrent future runs its callbacks inside `cancel`."""
        running = self._request_futures
        finished = [msg_id for msg_id, future in list(running.items()) if future.done()]
        for msg_id in finished:
            running.pop(msg_id, None)

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

    def _send_response(self, msg_id, result=None, error=None) -> None:
        early = self.answered_early.pop(msg_id, _NOT_ANSWERED) if isinstance(msg_id, (int, str)) else _NOT_ANSWERED
        if early is _NOT_ANSWERED:
            super()._send_response(msg_id, result, error)
            return
        # Already answered: never twice.  Our answer and pygls' must be the same.
        ours = json.loads(json.dumps(result, default=self._serialize_message)) if error is None else None
        if ours != early:
            log.error("the initialize answer sent at start-up differs from pygls' (%s); the client may "
                      "expect features the server lacks, or miss some: %s", "error" if error else "result",
                      json.dumps(error, default=self._serialize_message) if error else json.dumps(ours))


def _field_error(error: BaseException, expected: type | None) -> str:
    """cattrs' wording, with the validator's own sentence where it has one ("Position.line
    should be in range [0:2147483647], but was -1.")."""
    if type(error) is ValueError and str(error):
        return f"invalid value ({error})"
    return format_exception(error, expected)


# ------------------------------------------------------------------ serving
def serve_stream(protocol: TorchProtocol, stream: ClientStream, stdout: BinaryIO) -> int:
    """Serve until `exit` or the end of the client's stream; the exit code the process should end with."""
    protocol.set_writer(StdoutWriter(stdout))
    return asyncio.run(_serve(protocol, stream))


async def _serve(protocol: TorchProtocol, stream: ClientStream) -> int:
    chunks = stream.chunks.to_loop(asyncio.get_running_loop())
    for body in stream.bodies:  # cut by the start-up path while pygls was loading
        if not _handled(protocol, body):
            return _exit_code(protocol)
    stream.bodies.clear()
    while not stream.ended:
        chunk = await chunks.get()
        if not chunk:
            break  # the client closed the stream: a normal end only after `shutdown`
        for body in stream.framer.feed(chunk):
            if not _handled(protocol, body):
                return _exit_code(protocol)
    return _exit_code(protocol)


def _handled(protocol: TorchProtocol, body: bytes) -> bool:
    """Handle one body; False when it was `exit`."""
    try:
        protocol.receive_body(body)
    except SystemExit:  # pygls' `exit` handler
        return False
    except Exception:
        log.exception("a message from the client could not be handled")
    return True


def _exit_code(protocol: TorchProtocol) -> int:
    return EXIT_AFTER_SHUTDOWN if protocol.shutdown_received else EXIT_WITHOUT_SHUTDOWN
