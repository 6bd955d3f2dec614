"""Start-up (`torch_lsp.startup`): `initialize` is answered from a prepared result while
pygls loads, then pygls takes the stream over.  Through the real server's stdio: the
prepared answer equals pygls' own for several clients, and messages sent right after
`initialize`, before pygls has loaded, are each answered once, in order."""
from __future__ import annotations

import pytest
from pygls.protocol import default_converter

from tests.lsp.lsp_session import NEOVIM, VSCODE, capabilities
from tests.lsp.raw_stdio import RawServer, frame

PYGLS_ANSWERS = {"TORCH_LSP_EARLY_INITIALIZE": "0"}
URI = "file:///workspace/model.py"
TEXT = "import torch\n\nx = torch.zeros(2, 3)\ny = x.view(5)\n"  # TL501: 6 elements viewed as [5]
METHOD_NOT_FOUND = -32601

CLIENTS = {
    "vscode": default_converter().unstructure(capabilities(VSCODE)),
    "neovim": default_converter().unstructure(capabilities(NEOVIM)),
    "nothing stated": {},
    "utf-32 first, notebooks, will-save": {
        "general": {"positionEncodings": ["utf-32", "utf-8"]},
        "notebookDocument": {"synchronization": {"dynamicRegistration": False}},
        "textDocument": {"synchronization": {"willSave": True, "willSaveWaitUntil": False}},
    },
    "unknown encodings only": {"general": {"positionEncodings": ["utf-7"]}},
}


def initialize_answer(client_capabilities: dict, env: dict | None) -> tuple[dict, str]:
    """The initialize reply, and the server's stderr once pygls has taken over."""
    server = RawServer(env)
    try:
        server.request(0, "initialize", {"processId": None, "rootUri": None, "capabilities": client_capabilities})
        reply = server.reply_to(0)
        server.notify("initialized", {})
        server.request(1, "shutdown", None)  # answered only once pygls has the stream
        server.reply_to(1)
        server.notify("exit", None)
        assert server.exit_code() == 0
        return reply, server.stderr.decode("utf-8", "replace")
    finally:
        server.close()


@pytest.mark.parametrize("client", list(CLIENTS))
def test_the_prepared_initialize_answer_is_pygls_answer(client):
    early, early_log = initialize_answer(CLIENTS[client], None)
    from_pygls, _ = initialize_answer(CLIENTS[client], PYGLS_ANSWERS)
    assert early["result"] == from_pygls["result"]
    # The server compares the two itself at start-up, and says so when they differ.
    assert "differs from pygls" not in early_log


def test_messages_sent_with_initialize_are_each_answered_once():
    server = RawServer()
    try:
        # One write: everything arrives while pygls is still loading.  (A client without
        # `workspace/configuration`: this one answers no requests.)
        server.send_bytes(b"".join(frame(message) for message in [
            {"jsonrpc": "2.0", "id": 0, "method": "initialize",
             "params": {"processId": None, "rootUri": None,
                        "capabilities": {"general": {"positionEncodings": ["utf-8"]}}}},
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "method": "textDocument/didOpen",
             "params": {"textDocument": {"uri": URI, "languageId": "python", "version": 1, "text": TEXT}}},
            {"jsonrpc": "2.0", "id": 1, "method": "textDocument/hover",
             "params": {"textDocument": {"uri": URI}, "position": {"line": 2, "character": 0}}},
            {"jsonrpc": "2.0", "id": 2, "method": "textDocument/diagnostic", "params": {"textDocument": {"uri": URI}}},
            {"jsonrpc": "2.0", "id": 3, "method": "textDocument/documentSymbol",
             "params": {"textDocument": {"uri": URI}}},
        ]))
        initialize, hover, pulled, unknown = (server.reply_to(request_id) for request_id in range(4))
        assert initialize["result"]["capabilities"]["positionEncoding"] == "utf-8"  # the client's choice
        assert "x: Tensor[2, 3]" in hover["result"]["contents"]["value"]  # the hover of the checked document
        assert [d["code"] for d in pulled["result"]["items"]] == ["TL501"]
        assert unknown["error"]["code"] == METHOD_NOT_FOUND
        server.request(4, "shutdown", None)
        server.reply_to(4)
        server.notify("exit", None)
        assert server.exit_code() == 0
        replies = [m["id"] for m in server.messages if "id" in m and "method" not in m]
        assert sorted(replies) == [0, 1, 2, 3, 4] and replies[0] == 0
    finally:
        server.close()


INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
              "params": {"processId": None, "rootUri": None, "capabilities": {}}}
SHUTDOWN_AND_EXIT = [{"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": None},
                     {"jsonrpc": "2.0", "method": "exit", "params": None}]


GOODBYES = {"shutdown and exit": SHUTDOWN_AND_EXIT, "exit alone": SHUTDOWN_AND_EXIT[1:], "stdin closed": []}


@pytest.mark.parametrize("goodbye, code, answered", [("shutdown and exit", 0, [0, 1]), ("exit alone", 1, [0]),
                                                     ("stdin closed", 1, [0])])
def test_a_client_that_leaves_before_pygls_has_loaded_ends_the_server(goodbye, code, answered):
    server = RawServer()
    try:
        messages = [INITIALIZE] + GOODBYES[goodbye]
        server.send_bytes(b"".join(frame(message) for message in messages))
        if goodbye == "stdin closed":
            server.process.stdin.close()
        assert server.exit_code() == code
        assert [m["id"] for m in server.messages if "id" in m] == answered
    finally:
        server.close()
