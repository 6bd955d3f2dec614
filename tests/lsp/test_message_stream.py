"""What the server answers to what a client library would never send: parameters that do
not fit the protocol's types, malformed headers, requests after `shutdown`, `exit`
without `shutdown` (`torch_lsp.message_stream`), through the real server's stdio."""
from __future__ import annotations

import json

import pytest

from tests.lsp.raw_stdio import RawServer

URI = "file:///workspace/model.py"
TEXT = "import torch\n\nx = torch.zeros(2, 3)\n"
INVALID_PARAMS = -32602
INVALID_REQUEST = -32600
PARSE_ERROR = -32700
REQUEST_CANCELLED = -32800


@pytest.fixture(scope="module")
def server():
    raw = RawServer()
    try:
        raw.initialize()
        raw.notify("textDocument/didOpen",
                   {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": TEXT}})
        yield raw
    finally:
        raw.close()


def hover(request_id, position) -> dict:
    return {"jsonrpc": "2.0", "id": request_id, "method": "textDocument/hover",
            "params": {"textDocument": {"uri": URI}, "position": position}}


def body_of(message: dict) -> bytes:
    return json.dumps(message).encode("utf-8")


@pytest.mark.parametrize("position, field", [
    ({"line": -1, "character": 0}, "Position.line"),
    ({"line": 2**31, "character": 0}, "Position.line"),
    ({"line": 0, "character": "two"}, "position.character"),
])
def test_a_position_outside_the_protocol_is_answered_invalid_params(server, position, field):
    server.send(hover(f"bad-{position}", position))
    reply = server.reply_to(f"bad-{position}")
    assert reply["error"]["code"] == INVALID_PARAMS
    assert "textDocument/hover" in reply["error"]["message"] and field in reply["error"]["message"]


def test_a_null_range_is_answered_invalid_params(server):
    server.request("null-range", "textDocument/codeAction",
                   {"textDocument": {"uri": URI}, "range": None, "context": {"diagnostics": []}})
    reply = server.reply_to("null-range")
    assert reply["error"]["code"] == INVALID_PARAMS
    assert "range" in reply["error"]["message"]


def test_a_lower_case_header_with_lf_only_lines_is_read(server):
    body = body_of(hover("lower-case", {"line": 2, "character": 0}))
    server.send_bytes(b"content-length: %d\n\n" % len(body) + body)
    assert "result" in server.reply_to("lower-case")


def test_a_content_length_too_small_costs_that_message_only(server):
    body = body_of(hover("cut-short", {"line": 2, "character": 0}))
    server.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(body) - 7) + body)
    server.send(hover("after-cut-short", {"line": 2, "character": 0}))
    assert server.reply_to(None)["error"]["code"] == PARSE_ERROR  # the JSON-RPC answer to an unreadable body
    assert "result" in server.reply_to("after-cut-short")


def test_a_content_length_too_large_costs_no_message(server):
    body = body_of(hover("too-long", {"line": 2, "character": 0}))
    server.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(body) + 40) + body)
    server.send(hover("after-too-long", {"line": 2, "character": 0}))
    assert "result" in server.reply_to("too-long")
    assert "result" in server.reply_to("after-too-long")


def test_noise_between_messages_is_skipped(server):
    server.send_bytes(b"\r\nthis is not a header\r\n\r\n")
    server.send(hover("after-noise", {"line": 2, "character": 0}))
    assert "result" in server.reply_to("after-noise")


def test_requests_after_shutdown_are_refused_and_exit_ends_with_0():
    raw = RawServer()
    try:
        raw.initialize()
        raw.request("shutdown", "shutdown", None)
        assert raw.reply_to("shutdown")["result"] is None
        raw.send(hover("late", {"line": 0, "character": 0}))
        assert raw.reply_to("late")["error"]["code"] == INVALID_REQUEST
        raw.notify("exit", None)
        assert raw.exit_code() == 0
    finally:
        raw.close()


def test_exit_without_shutdown_ends_with_1():
    raw = RawServer()
    try:
        raw.initialize()
        raw.notify("exit", None)
        assert raw.exit_code() == 1
    finally:
        raw.close()



def test_invalid_utf_8_in_a_document_is_read_as_replacement_characters(server):
    uri = "file:///workspace/latin1.py"
    text = 'import torch.nn as nn\nname = "caf\\xe9"\nmodel = nn.DataParallel(nn.Linear(4, 2))\n'
    body = body_of({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}}}).replace(b"\\\\xe9", b"\xe9")
    assert b"caf\xe9" in body  # a Latin-1 byte where UTF-8 is due
    server.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    diagnostics = server.published(uri)["params"]["diagnostics"]
    assert [d["code"] for d in diagnostics] == ["TL406"]


def test_a_long_request_can_be_cancelled():
    # A hover waits for the check of its version; this one takes a while to check (the cancel comes within milliseconds).
    big = "import torch\nimport torch.nn as nn\n\n" + "".join(
        f"class Block{n}(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.fc = nn.Linear({n + 1}, 4)\n\n    def forward(self, x):\n        return self.fc(x).relu()\n\n\n"
        for n in range(300))
    raw = RawServer()
    try:
        raw.initialize()
        raw.notify("textDocument/didOpen",
                   {"textDocument": {"uri": "file:///big.py", "languageId": "python", "version": 1, "text": big}})
        raw.send(hover("slow", {"line": 5, "character": 8}) | {"params": {
            "textDocument": {"uri": "file:///big.py"}, "position": {"line": 5, "character": 8}}})
        raw.notify("$/cancelRequest", {"id": "slow"})
        assert raw.reply_to("slow")["error"]["code"] == REQUEST_CANCELLED
        raw.notify("textDocument/didOpen",
                   {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": TEXT}})
        raw.send(hover("after", {"line": 2, "character": 0}))
        assert "result" in raw.reply_to("after")
    finally:
        raw.close()
