"""The `initialize` answer as plain JSON, without lsprotocol or pygls.

The start-up path (`startup`) sends this while pygls and lsprotocol still import, so it
must be exactly what pygls would answer: pygls builds it from the features `lsp`
registers and from what the client says (its position encodings, whether it syncs
notebooks, whether it states will-save support).  tests/lsp/test_startup.py compares
the two answers for several clients, and the server logs an error at start-up if
pygls' answer ever differs
(`message_stream.TorchProtocol`), so a feature added to `lsp` without its entry here
fails a test instead of going unannounced.
"""
from __future__ import annotations

from torch_lsp import __version__

SERVER_NAME = "torch-lsp"
# pygls' choice: the client's first encoding among these, else UTF-16.
SUPPORTED_POSITION_ENCODINGS = ("utf-8", "utf-16", "utf-32")
DEFAULT_POSITION_ENCODING = "utf-16"
INCREMENTAL_SYNC = 2  # TextDocumentSyncKind.Incremental

# `lsp.create_server`'s features with options, as pygls writes them.
CODE_ACTION_KINDS = ["quickfix", "source.fixAll.torch-lsp", "refactor.rewrite"]
COMMANDS = ["torch-lsp.probeShapes"]
# `notebook_sync.NOTEBOOK_SYNC`, offered only to a client that syncs notebooks.
NOTEBOOK_SYNC = {
    "notebookSelector": [{"notebook": "jupyter-notebook", "cells": [{"language": "python"}]}],
    "save": True,
}


def initialize_result(params: dict) -> dict:
    """The `result` of the `initialize` request whose `params` (as received) are given."""
    client = params.get("capabilities") or {}
    capabilities = {
        "positionEncoding": position_encoding(client),
        "textDocumentSync": text_document_sync(client),
        "hoverProvider": True,
        "codeActionProvider": {"codeActionKinds": list(CODE_ACTION_KINDS), "resolveProvider": True},
        "codeLensProvider": {"resolveProvider": False},
        "executeCommandProvider": {"commands": list(COMMANDS)},
        "inlayHintProvider": {"resolveProvider": False},
        "diagnosticProvider": {"identifier": SERVER_NAME, "interFileDependencies": True,
                               "workspaceDiagnostics": True},
        "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
    }
    if client.get("notebookDocument") is not None:
        capabilities["notebookDocumentSync"] = NOTEBOOK_SYNC
    return {"capabilities": capabilities, "serverInfo": {"name": SERVER_NAME, "version": __version__}}


def text_document_sync(client: dict) -> dict:
    """No will-save handlers: pygls says `false` where the client states its support, and
    leaves the field out where it does not."""
    sync = {"openClose": True, "change": INCREMENTAL_SYNC, "save": True}
    stated = ((client.get("textDocument") or {}).get("synchronization") or {})
    for field in ("willSave", "willSaveWaitUntil"):
        if stated.get(field) is not None:
            sync[field] = False
    return sync


def position_encoding(client: dict) -> str:
    general = client.get("general") or {}
    for encoding in general.get("positionEncodings") or ():
        if encoding in SUPPORTED_POSITION_ENCODINGS:
            return encoding
    return DEFAULT_POSITION_ENCODING


def can_answer(params) -> bool:
    """Params pygls will read as they are: an answer from them is the answer pygls would give."""
    if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
        return False
    process_id = params.get("processId")
    parts = params["capabilities"].get("general"), params["capabilities"].get("notebookDocument")
    return (process_id is None or type(process_id) is int) and all(
        part is None or isinstance(part, dict) for part in parts)
