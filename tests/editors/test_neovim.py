"""A real headless Neovim against the real server.

Neovim opens a copy of `data/intent_classifier.py`, starts `python -m server serve`
through its own LSP client (`vim.lsp.start_client`, which works from 0.7 on), waits
for the pushed diagnostics and writes what it received to a JSON file.  The test
checks those against the file's `# expect:` markers, and checks one column on a line
with non-ASCII text before the finding, so the position conversion is exercised
end to end (Neovim turns the server's UTF-16 columns into byte columns itself).

Without `nvim` on PATH the test is skipped locally and fails in CI (`CI` set).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "neovim_harness.lua"
SAMPLE = HERE / "data" / "intent_classifier.py"
REPO_ROOT = HERE.parent.parent
WAIT_FOR_DIAGNOSTICS_MS = 60_000
NVIM_TIMEOUT_S = 120
EXPECT = re.compile(r"#\s*expect:\s*(?P<codes>[A-Za-z0-9_, -]+)$")


def nvim_or_skip() -> str:
    nvim = shutil.which("nvim")
    if nvim:
        return nvim
    message = ("Neovim (`nvim`) is not on PATH, so the real-editor test cannot run. "
               "Install it with `apt-get install -y neovim` (.ci/run does).")
    if os.environ.get("CI"):
        pytest.fail(message + " CI is set, so this is a failure, not a skip.")
    pytest.skip(message)


def expected_findings(text: str) -> set[tuple[int, str]]:
    """(1-based line, code) for every `# expect:` marker in the file."""
    found = set()
    for number, line in enumerate(text.splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            found.update((number, code.strip()) for code in match["codes"].split(",") if code.strip())
    return found


def run_neovim(nvim: str, file: Path, out: Path, home: Path) -> subprocess.CompletedProcess:
    """Runs the harness in a fresh, isolated Neovim; kills its whole process group on a hang."""
    env = dict(os.environ)
    env.update({
        "TORCH_LSP_FILE": str(file),
        "TORCH_LSP_OUT": str(out),
        "TORCH_LSP_CMD": json.dumps([sys.executable, "-m", "server", "serve"]),
        "TORCH_LSP_TIMEOUT_MS": str(WAIT_FOR_DIAGNOSTICS_MS),
        # No user configuration, plugins, shada or logs from this machine's Neovim.
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / "config"),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_STATE_HOME": str(home / "state"),
        "XDG_CACHE_HOME": str(home / "cache"),
        # The server is this checkout's package, wherever pytest was started.
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
    })
    command = [nvim, "--headless", "-n", "-i", "NONE", "--noplugin", "-u", str(HARNESS)]
    process = subprocess.Popen(command, cwd=file.parent, env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=NVIM_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # nvim and the server it started
        stdout, stderr = process.communicate()
        pytest.fail(f"Neovim did not finish within {NVIM_TIMEOUT_S} s and was killed.\n"
                    f"stdout: {stdout.decode(errors='replace')}\nstderr: {stderr.decode(errors='replace')}")
    finally:
        _kill_leftovers(process.pid)
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


def _kill_leftovers(process_group: int) -> None:
    # The server normally exits when Neovim closes its stdin; make sure nothing lingers.
    try:
        os.killpg(process_group, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_neovim_receives_the_servers_diagnostics(tmp_path):
    nvim = nvim_or_skip()
    text = SAMPLE.read_text(encoding="utf-8")
    file = tmp_path / "project" / SAMPLE.name
    file.parent.mkdir()
    file.write_text(text, encoding="utf-8")
    out = tmp_path / "received.json"

    completed = run_neovim(nvim, file, out, tmp_path / "home")
    assert out.exists(), (f"Neovim wrote no result (exit {completed.returncode}).\n"
                          f"stderr: {completed.stderr.decode(errors='replace')}")
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result.get("error") is None, f"{result.get('error')} (Neovim {result.get('nvim_version')})"

    received = result["diagnostics"]
    assert {(d["lnum"] + 1, d["code"]) for d in received} == expected_findings(text)
    assert all(d["source"] == "torch-lsp" and d["message"].strip() for d in received)

    # The softmax call sits after "é" and an emoji on its line: Neovim must place it at
    # the call's byte column, which only works if the server's columns were right.
    softmax = next(d for d in received if d["code"] == "TL201")
    line = text.splitlines()[softmax["lnum"]]
    call = "F.softmax(logits)"
    assert softmax["col"] == line.encode("utf-8").index(call.encode("utf-8"))
    assert softmax["end_col"] == softmax["col"] + len(call.encode("utf-8"))
