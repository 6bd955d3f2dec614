"""JupyterLab finds torch-lsp by itself: a real Jupyter server with jupyter-lsp (the server
side of jupyterlab-lsp) lists torch-lsp among its language servers (GET /lsp/status) and,
over its language-server websocket, starts it and relays its diagnostics, as JupyterLab
would for a notebook.

The server runs with the wheel of this checkout installed into a scratch folder first on
its path, so what is tested is the entry point the wheel declares
(`jupyter_lsp_spec_v1`), not a developer's older installation.
"""
from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("jupyter_lsp", reason="jupyter-lsp is in the test extra: pip install -e '.[test]'")
from tornado.websocket import websocket_connect  # noqa: E402  (jupyter_server's web framework)

TOKEN = "torch-lsp-test-token"
START_TIMEOUT_S = 90
BUGGY = "import torch.nn.functional as F\n\n\ndef probabilities(logits):\n    return F.softmax(logits)\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def get_json(url: str) -> dict:
    request = urllib.request.Request(url, headers={"Authorization": f"token {TOKEN}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


@pytest.fixture(scope="module")
def jupyter(built_wheel: Path, tmp_path_factory: pytest.TempPathFactory):
    """A running Jupyter server (jupyter_server + jupyter-lsp) whose Python has the built wheel; yields its URL."""
    scratch = tmp_path_factory.mktemp("jupyter")
    site = scratch / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
                    str(built_wheel)], check=True, capture_output=True, timeout=300)
    root = scratch / "notebooks"
    root.mkdir()
    config = scratch / "config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(
        # allow_root: CI runs as root, where Jupyter refuses to start without it.
        json.dumps({"ServerApp": {"jpserver_extensions": {"jupyter_lsp": True}, "allow_root": True}}))
    port = free_port()
    env = {**os.environ, "PYTHONPATH": str(site), "JUPYTER_CONFIG_DIR": str(config),
           "JUPYTER_DATA_DIR": str(scratch / "data"), "JUPYTER_RUNTIME_DIR": str(scratch / "runtime"),
           "HOME": str(scratch)}
    log = (scratch / "jupyter.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_server", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}"],
        cwd=scratch, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                get_json(f"{url}/api/status")
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the Jupyter server did not start:\n{(scratch / 'jupyter.log').read_text()[-4000:]}")
                time.sleep(0.5)
        yield url, root
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()


def test_jupyter_lsp_lists_torch_lsp_as_a_python_language_server(jupyter):
    url, _ = jupyter
    status = get_json(f"{url}/lsp/status")
    assert "torch-lsp" in status["specs"], sorted(status["specs"])
    spec = status["specs"]["torch-lsp"]
    # jupyter-lsp blanks `argv` in this answer; the next test runs it.
    assert spec["languages"] == ["python"]
    assert "text/x-ipython" in spec["mime_types"]
    assert spec["display_name"] == "torch-lsp"


async def lsp_exchange(url: str, document_uri: str) -> list[dict]:
    """Initialize torch-lsp through jupyter-lsp's websocket, open a buggy document, return its diagnostics."""
    ws_url = url.replace("http://", "ws://") + f"/lsp/ws/torch-lsp?token={TOKEN}"
    connection = await websocket_connect(ws_url)

    async def reply_to(request_id: int) -> dict:
        while True:
            message = json.loads(await connection.read_message())
            if message.get("id") == request_id and "method" not in message:
                return message

    connection.write_message(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": None, "rootUri": None, "capabilities": {}}}))
    initialized = await reply_to(1)
    assert "capabilities" in initialized["result"], initialized
    connection.write_message(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
    connection.write_message(json.dumps({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
        "textDocument": {"uri": document_uri, "languageId": "python", "version": 1, "text": BUGGY}}}))
    try:
        while True:
            message = json.loads(await connection.read_message())
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["diagnostics"]:
                return message["params"]["diagnostics"]
    finally:
        connection.close()


def test_jupyter_lsp_starts_torch_lsp_and_relays_its_diagnostics(jupyter):
    url, root = jupyter
    document = root / "notebook.py"
    diagnostics = asyncio.run(asyncio.wait_for(lsp_exchange(url, document.as_uri()), timeout=120))
    assert [(d["code"], d["range"]["start"]) for d in diagnostics] == [("TL201", {"line": 4, "character": 11})]
