"""How `MessageFramer` cuts the client's byte stream into message bodies, however the
stream arrives: in pieces of any size, with lenient headers, and after a wrong
Content-Length (the server-level behaviour is in tests/lsp/test_message_stream.py)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_lsp.message_framing import MessageFramer

BODIES = [json.dumps({"id": 1, "text": "x = 1\n"}).encode(), json.dumps({"a": [1, 2]}, indent=2).encode(),
          b"{}", json.dumps({"text": "caf\u00e9 \U0001f525"}).encode()]
HEADERS = [b"Content-Length: %d\r\n\r\n", b"content-length: %d\n\n",
           b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"]


def stream(bodies, headers) -> bytes:
    return b"".join(header % len(body) + body for body, header in zip(bodies, headers))


def fed_in_pieces(data: bytes, cuts: list[int]) -> list[bytes]:
    framer, bodies, start = MessageFramer(), [], 0
    for cut in sorted(set(cuts)) + [len(data)]:
        bodies += framer.feed(data[start:cut])
        start = cut
    return bodies


@settings(max_examples=60, deadline=None, derandomize=True, database=None)
@given(st.lists(st.sampled_from(range(len(BODIES))), min_size=1, max_size=6), st.data())
def test_bodies_come_out_whole_however_the_stream_is_cut(picks, data):
    bodies = [BODIES[i] for i in picks]
    headers = [HEADERS[data.draw(st.integers(0, len(HEADERS) - 1))] for _ in bodies]
    whole = stream(bodies, headers)
    cuts = data.draw(st.lists(st.integers(0, len(whole)), max_size=8))
    assert fed_in_pieces(whole, cuts) == bodies


@pytest.mark.parametrize("wrong_by", [-5, +30])
def test_a_wrong_content_length_costs_that_message_at_most(wrong_by):
    first, second = BODIES[0], BODIES[1]
    data = b"Content-Length: %d\r\n\r\n" % (len(first) + wrong_by) + first + stream([second], HEADERS[:1])
    for size in (1, 7, len(data)):
        bodies = fed_in_pieces(data, list(range(size, len(data), size)))
        assert bodies[-1] == second
        assert bodies[0] == first if wrong_by > 0 else bodies[0] == first[: len(first) + wrong_by]
